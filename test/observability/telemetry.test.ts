/**
 * Metrics and traces through OpenTelemetry (docs/observability.md): with an SDK installed, the
 * library's counters, histograms and gauges report what happened, token requests and store calls get
 * spans, bearer checks only when asked; no secret, token or hash ever becomes an attribute.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type DataPoint, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { UnreliableStore } from '../hardening/helpers.js';

/** A reader the test collects from when it likes. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

async function collect(reader: TestReader): Promise<MetricData[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
}

function points(metricsData: MetricData[], name: string): Array<DataPoint<unknown>> {
  return (metricsData.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as Array<DataPoint<unknown>>;
}

function sumWhere(metricsData: MetricData[], name: string, attributes: Attributes = {}): number {
  return points(metricsData, name)
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((total, p) => total + (p.value as number), 0);
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

function instrumentedApp(traceBearerChecks = false, options: Parameters<typeof createTestApp>[0] = {}) {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const made = createTestApp({ failureLimit: { max: 2 }, ...options, telemetry: { meterProvider, tracerProvider, traceBearerChecks } });
  return { ...made, reader, spans };
}

describe('OpenTelemetry metrics', () => {
  // docs/observability.md: "The instrumentation scope is `express-service-accounts` with the package
  // version (also when run from the sources)": these tests run the TypeScript sources.
  it("report the package's version as the instrumentation scope version", async () => {
    const { app, sa, reader } = instrumentedApp();
    const account = await sa.admin.createAccount({ name: 'versioned' });
    await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const { resourceMetrics } = await reader.collect();
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(resourceMetrics.scopeMetrics.map((scope) => scope.scope)).toContainEqual({ name: 'express-service-accounts', version, schemaUrl: undefined });
  });

  it('counts tokens issued, token requests refused by reason, bearer refusals and limiter refusals', async () => {
    const { app, sa, reader } = instrumentedApp();
    const account = await sa.admin.createAccount({ name: 'metered', scopes: ['jobs:read'] });
    const token = async () => request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' });
    const issued = await token();
    expect(issued.status).toBe(200);
    const wrong = `${account.secret.value.slice(0, -7)}xxxxxxx`;
    for (let i = 0; i < 3; i++) await request(app).post('/oauth/token').auth(account.clientId, wrong).type('form').send({ grant_type: 'client_credentials' });
    await request(app).get('/api/whoami').auth('not-a-token', { type: 'bearer' });
    await request(app).post('/api/jobs').auth(issued.body.access_token, { type: 'bearer' }).send({});
    await request(app).get('/api/whoami').auth(issued.body.access_token, { type: 'bearer' }).expect(200);

    const data = await collect(reader);
    expect(sumWhere(data, 'service_accounts.tokens.issued')).toBe(1);
    expect(sumWhere(data, 'service_accounts.token_requests.refused', { 'error.type': 'invalid_client' })).toBe(2);
    expect(sumWhere(data, 'service_accounts.token_requests.refused', { 'error.type': 'too_many_requests' })).toBe(1);
    expect(sumWhere(data, 'service_accounts.limiter.refusals')).toBe(1);
    expect(sumWhere(data, 'service_accounts.bearer_checks.refused', { 'error.type': 'invalid_token', 'service_accounts.reason': 'invalid' })).toBe(1);
    expect(sumWhere(data, 'service_accounts.bearer_checks.refused', { 'error.type': 'insufficient_scope' })).toBe(1);
    // Store calls by operation, and the cache that spares them.
    expect(points(data, 'service_accounts.store.duration').map((p) => p.attributes['db.operation.name'])).toContain('findAccount');
    const ratio = points(data, 'service_accounts.account_cache.hit_ratio')[0]?.value as number;
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(points(data, 'service_accounts.secret_verification.duration').length).toBe(1);
    expect(points(data, 'service_accounts.secret_verification.queue.wait').length).toBe(1);
    expect(points(data, 'service_accounts.secret_verification.queue.depth')[0]?.value).toBe(0);
    await sa.close();
  });

  it("gives a failed store call's duration its error type: timeout past storeTimeout, else the class of the store's error", async () => {
    const store = new UnreliableStore();
    const { sa, reader, clock } = instrumentedApp(false, { store, storeTimeout: 100 });
    await sa.ready();
    store.mode = 'hang';
    expect((await sa.health()).store.status).toBe('unavailable');
    store.mode = 'fail';
    clock.advance(1); // past the second a probe's result is reused for
    expect((await sa.health()).store.status).toBe('unavailable');
    const failed = points(await collect(reader), 'service_accounts.store.duration').filter((p) => p.attributes['error.type'] !== undefined);
    expect(failed.map((p) => p.attributes['error.type'])).toEqual(['timeout', 'Error']);
    await sa.close();
  });

  it('never puts a secret, a token or a hash in an attribute', async () => {
    const { app, sa, store, reader, spans } = instrumentedApp(true);
    const account = await sa.admin.createAccount({ name: 'attributes' });
    const ok = await request(app).post('/oauth/token').send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    await request(app).get('/api/whoami').auth(ok.body.access_token, { type: 'bearer' }).expect(200);
    await request(app).post('/oauth/token').send({ grant_type: 'client_credentials', client_id: account.secret.value, client_secret: account.secret.value });
    const stored = (await store.findAccount(account.clientId))!.secrets[0]!.hash;
    const text = JSON.stringify([
      (await collect(reader)).flatMap((m) => m.dataPoints.map((p) => p.attributes)),
      spans.getFinishedSpans().map((s) => [s.name, s.attributes]),
    ]);
    for (const needle of [account.secret.value, ok.body.access_token as string, stored, 'esas_']) expect(text).not.toContain(needle);
    await sa.close();
  });
});

describe('OpenTelemetry traces', () => {
  it('gives each token request a span, with its store calls as children', async () => {
    const { app, sa, spans } = instrumentedApp();
    const account = await sa.admin.createAccount({ name: 'traced' });
    spans.reset();
    await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const finished = spans.getFinishedSpans();
    const endpoint = finished.find((s) => s.name === 'service_accounts.token_request');
    expect(endpoint?.attributes['http.response.status_code']).toBe(200);
    const find = finished.find((s) => s.name === 'service_accounts.store findAccount');
    expect(find?.attributes['db.operation.name']).toBe('findAccount');
    expect(find?.parentSpanContext?.spanId).toBe(endpoint?.spanContext().spanId);
    await sa.close();
  });

  it('traces bearer checks only when telemetry.traceBearerChecks is set', async () => {
    for (const traceBearerChecks of [false, true]) {
      const { app, sa, spans } = instrumentedApp(traceBearerChecks);
      const account = await sa.admin.createAccount({ name: 'bearer-traced' });
      const ok = await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' });
      spans.reset();
      await request(app).get('/api/whoami').auth(ok.body.access_token, { type: 'bearer' }).expect(200);
      const names = spans.getFinishedSpans().map((s) => s.name);
      expect(names.includes('service_accounts.bearer_check')).toBe(traceBearerChecks);
      await sa.close();
    }
  });
});
