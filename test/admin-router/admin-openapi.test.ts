/**
 * The admin router's OpenAPI 3.1 document: the committed docs/admin-openapi.json is the one generated
 * from the router's schemas and routes, it is a valid OpenAPI 3.1 document, the router serves it (with
 * its own mount path), and every problem type it names is documented in docs/errors.md.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { buildAdminOpenApiDocument, createAdminApi, createAdminRouter, MemoryAccountStore } from '../../src/index.js';
import { ADMIN_PROBLEM_NAMES, PROBLEM_TYPE_BASE } from '../../src/admin-router/admin-problem.js';
import { adminClient, COMMITTED_DOCUMENT_PATH } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';

const committed = JSON.parse(readFileSync(COMMITTED_DOCUMENT_PATH, 'utf8')) as Record<string, unknown>;

describe('admin router OpenAPI document', () => {
  it('is committed as generated (run `npm run docs:admin-openapi` after changing a schema or route)', () => {
    expect(committed).toEqual(buildAdminOpenApiDocument({ mountPath: '/admin' }));
  });

  // OpenAPI 3.1.0 §4.8: the document validates against the specification's schema.
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(committed));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(committed.openapi).toBe('3.1.0');
  });

  it('is served at {mount}/openapi.json to anyone, with the paths under that mount', async () => {
    const { app } = createAdminRouterApp();
    const res = await request(app).get('/admin/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(committed);

    const elsewhere = express();
    elsewhere.use('/tenants/admin', createAdminRouter({ admin: createAdminApi({ store: new MemoryAccountStore() }), authorize: () => undefined }));
    const moved = await request(elsewhere).get('/tenants/admin/openapi.json').expect(200);
    expect(Object.keys(moved.body.paths as object)).toContain('/tenants/admin/service-accounts/{clientId}');
    expect(moved.body).toEqual(buildAdminOpenApiDocument({ mountPath: '/tenants/admin' }));
  });

  it('describes its own address as the router answers it: GET without login, no-store, and OPTIONS', async () => {
    const { app } = createAdminRouterApp();
    const api = adminClient(app);
    expect((await api.get('/admin/openapi.json')).headers['cache-control']).toBe('no-store');
    const paths = committed.paths as Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    expect(Object.keys(paths['/admin/openapi.json']!.get.responses['200']!.headers ?? {})).toContain('Cache-Control');
    const preflight = await api.options('/admin/openapi.json');
    expect(preflight.status).toBe(204);
    expect(preflight.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  // RFC 9457 §4: a problem type URI should resolve to documentation of the type.
  it('points every problem type at its own section of docs/errors.md', () => {
    const errors = readFileSync(resolve(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
    expect(PROBLEM_TYPE_BASE).toMatch(/\/docs\/errors\.md#admin-$/);
    for (const name of ADMIN_PROBLEM_NAMES) expect(errors, name).toContain(`\n### admin-${name}\n`);
  });
});
