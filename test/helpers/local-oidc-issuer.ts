/**
 * A real OpenID Connect issuer on loopback, for the tests of federated credentials: it serves its
 * discovery document and its JWK Set over HTTP on 127.0.0.1 (port 0), signs Kubernetes-shaped and
 * GitHub-Actions-shaped tokens, rotates its keys, and misbehaves on demand (hangs, goes down, answers
 * garbage or a huge body, redirects, answers slowly, serves a `kid` twice). Every request it receives is logged, so a
 * test can assert how many fetches happened, and that none did.
 *
 * ```ts
 * const idp = await startLocalIssuer()
 * const token = await idp.kubernetesToken({ audience: 'https://api.example.com' })
 * await idp.setMode('hang')
 * expect(idp.requests).toHaveLength(0)
 * await idp.close()
 * ```
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload, type KeyLike } from 'jose';
import { freePort } from './free-port.js';

export type LocalIssuerAlg = 'RS256' | 'ES256';

/**
 * How the issuer answers:
 * - `normal`: the documents;
 * - `hang`: accepts the request and never answers;
 * - `down`: the listener is closed (connections refused) until another mode is set;
 * - `garbage`: 200 with a body that is not JSON;
 * - `duplicateKid`: the JWK Set also holds an unrelated key with the current key's `kid`, listed first;
 * - `{ huge }`: 200 with a body of `huge` MB (with a Content-Length unless `announceLength: false`);
 * - `{ redirect }`: a 302 (or `status`) to that URL; with `endlessBody`, a body that never ends;
 * - `{ delay }`: the documents, after `delay` milliseconds;
 * - `{ status }`: that status with an empty JSON body;
 * - `{ body }`: 200 with that body.
 */
export type LocalIssuerMode =
  | 'normal'
  | 'hang'
  | 'down'
  | 'garbage'
  | 'duplicateKid'
  | { readonly huge: number; readonly announceLength?: boolean }
  | { readonly redirect: string; readonly status?: 301 | 302 | 303 | 307 | 308; readonly endlessBody?: boolean }
  | { readonly delay: number }
  | { readonly status: number }
  | { readonly body: string };

/** Which documents a mode applies to (`down` always takes the whole server). */
export type LocalIssuerScope = 'all' | 'discovery' | 'jwks';

export interface LocalIssuerOptions {
  /** The algorithm of the first key (and of rotated keys unless told otherwise). @default 'RS256' */
  readonly alg?: LocalIssuerAlg;
  /** A path the issuer identifier ends with, e.g. `/tenant-a`. @default '' */
  readonly pathPrefix?: string;
  /** The `Cache-Control` header of both documents. @default none */
  readonly cacheControl?: string;
}

export interface SignOptions {
  /** Sign with this key (a current or former one); any other value is only put in the header. */
  readonly kid?: string;
  /** The `alg` header (it must suit the key). @default the key's algorithm */
  readonly alg?: string;
  /** Extra or overriding protected header parameters. */
  readonly header?: Record<string, unknown>;
  /** Leave `kid` out of the header (the key is still `kid`'s, or the current one). */
  readonly withoutKid?: boolean;
}

export interface KubernetesTokenOptions {
  /** @default 'system:serviceaccount:payments:exporter' */
  readonly subject?: string;
  readonly audience: string | readonly string[];
  /** Seconds. @default 3600 */
  readonly lifetime?: number;
  /** @default new Date() */
  readonly now?: Date;
  /** @default 'exporter-7d9f8b6c5-x2k4q' */
  readonly pod?: string;
  /** Sign with this key (a current or former one), as an issuer still using its old key after publishing a new one. @default the current key */
  readonly kid?: string;
  /** Leave `kid` out of the header, as some issuers do. */
  readonly withoutKid?: boolean;
}

export interface GitHubActionsTokenOptions {
  /** `OWNER/REPO`. @default 'acme/billing' */
  readonly repository?: string;
  /** @default 'refs/heads/main' */
  readonly ref?: string;
  readonly audience: string;
  /** A deployment environment: the subject then names it instead of the ref. */
  readonly environment?: string;
  /** @default `repo:OWNER/REPO:ref:REF` (or `repo:OWNER/REPO:environment:ENV`) */
  readonly subject?: string;
  /** Seconds. @default 300 */
  readonly lifetime?: number;
  /** @default new Date() */
  readonly now?: Date;
  /** As in {@link KubernetesTokenOptions.kid}. @default the current key */
  readonly kid?: string;
}

export interface LocalIssuer {
  /** The issuer identifier: `http://127.0.0.1:PORT` plus the path prefix. */
  readonly issuer: string;
  readonly port: number;
  readonly discoveryUrl: string;
  readonly jwksUri: string;
  /** Another path serving the same JWK Set, never affected by a mode (a same-host redirect target). */
  readonly movedJwksUri: string;
  /** Every request received, oldest first. */
  readonly requests: { readonly path: string; readonly url: string; readonly at: Date }[];
  /** The `kid` of the key tokens are signed with. */
  readonly currentKid: string;
  /** The `Cache-Control` header of both documents; `undefined` sends none. */
  cacheControl: string | undefined;
  /** Members merged into the discovery document (e.g. another `issuer` or `jwks_uri`). */
  discoveryOverrides: Record<string, unknown>;
  /** Requests received for one document. */
  fetches(document: 'discovery' | 'jwks'): number;
  /** Connections the server holds open right now (a client that stopped reading but never closed counts). */
  openConnections(): number;
  /** The public JWK Set as served in `normal` mode. */
  jwks(): { keys: JWK[] };
  setMode(mode: LocalIssuerMode, scope?: LocalIssuerScope): Promise<void>;
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  kubernetesToken(options: KubernetesTokenOptions): Promise<string>;
  githubActionsToken(options: GitHubActionsTokenOptions): Promise<string>;
  /** A new current key; the old one leaves the JWK Set unless `keepOld`. Resolves to the new `kid`. */
  rotateKeys(options?: { readonly keepOld?: boolean; readonly alg?: LocalIssuerAlg }): Promise<string>;
  close(): Promise<void>;
}

interface IssuerKey {
  readonly kid: string;
  readonly alg: LocalIssuerAlg;
  readonly privateKey: KeyLike;
  readonly publicJwk: JWK;
}

let keyCount = 0;

async function newKey(alg: LocalIssuerAlg, kid = `key-${++keyCount}-${randomUUID().slice(0, 8)}`): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Starts an issuer on 127.0.0.1 (a free port). Close it with `close()`. */
export async function startLocalIssuer(options: LocalIssuerOptions = {}): Promise<LocalIssuer> {
  const prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
  const allKeys = new Map<string, IssuerKey>();
  let current = await newKey(options.alg ?? 'RS256');
  allKeys.set(current.kid, current);
  let published: IssuerKey[] = [current];
  let decoy: IssuerKey | undefined;
  let mode: LocalIssuerMode = 'normal';
  let scope: LocalIssuerScope = 'all';
  const requests: { path: string; url: string; at: Date }[] = [];
  const paths = { discovery: `${prefix}/.well-known/openid-configuration`, jwks: `${prefix}/jwks`, moved: `${prefix}/jwks-moved` };

  const publicSet = (): { keys: JWK[] } => ({ keys: published.map((key) => ({ ...key.publicJwk })) });

  const sendJson = (res: ServerResponse, body: unknown): void => {
    const text = JSON.stringify(body);
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json');
    if (issuer.cacheControl !== undefined) res.setHeader('cache-control', issuer.cacheControl);
    res.setHeader('content-length', Buffer.byteLength(text));
    res.end(text);
  };

  const sendHuge = (res: ServerResponse, megabytes: number, announce: boolean): void => {
    const total = Math.round(megabytes * 1024 * 1024);
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json');
    if (announce) res.setHeader('content-length', total);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !res.destroyed) {
        const size = Math.min(chunk.length, total - sent);
        sent += size;
        if (!res.write(size === chunk.length ? chunk : chunk.subarray(0, size))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => res.off('drain', pump));
    pump();
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push({ path, url: req.url ?? '/', at: new Date() });
    const document = path === paths.discovery ? 'discovery' : path === paths.jwks ? 'jwks' : path === paths.moved ? 'moved' : undefined;
    if (document === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const affected = document !== 'moved' && (scope === 'all' || scope === document);
    const active: LocalIssuerMode = affected ? mode : 'normal';
    if (active === 'hang') return;
    if (active === 'garbage') {
      res.statusCode = 200;
      res.setHeader('content-type', 'application/json');
      res.end('<html><body>Service temporarily unavailable</body></html>');
      return;
    }
    if (typeof active === 'object' && 'huge' in active) return sendHuge(res, active.huge, active.announceLength ?? true);
    if (typeof active === 'object' && 'redirect' in active) {
      res.statusCode = active.status ?? 302;
      res.setHeader('location', active.redirect);
      if (active.endlessBody !== true) {
        res.end();
        return;
      }
      // Headers and a first chunk, then the body never ends: only the client can close this.
      res.setHeader('content-type', 'text/html');
      res.write('<html><body>Moved');
      return;
    }
    if (typeof active === 'object' && 'delay' in active) {
      const timer = setTimeout(() => {
        if (!res.destroyed) answer(document, res, 'normal');
      }, active.delay);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if (typeof active === 'object' && 'body' in active) {
      res.statusCode = 200;
      res.setHeader('content-type', 'application/json');
      res.end(active.body);
      return;
    }
    if (typeof active === 'object' && 'status' in active) {
      res.statusCode = active.status;
      res.setHeader('content-type', 'application/json');
      res.end('{}');
      return;
    }
    answer(document, res, active);
  };

  const answer = (document: 'discovery' | 'jwks' | 'moved', res: ServerResponse, active: LocalIssuerMode): void => {
    if (document === 'discovery') {
      sendJson(res, {
        issuer: issuer.issuer,
        jwks_uri: issuer.jwksUri,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        ...issuer.discoveryOverrides,
      });
      return;
    }
    const set = publicSet();
    if (active === 'duplicateKid' && decoy !== undefined) set.keys.unshift({ ...decoy.publicJwk, kid: current.kid, alg: current.alg });
    sendJson(res, set);
  };

  const server: Server = createServer(handle);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  // A port below the ephemeral range, so an outgoing connection cannot hold it while the issuer is
  // 'down' and setMode brings it back on the same port.
  for (let attempt = 1; !server.listening; attempt++) {
    await listen(await freePort()).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE' || attempt === 5) throw error;
    });
  }
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const signWith = async (claims: JWTPayload, signOptions: SignOptions = {}): Promise<string> => {
    const key = (signOptions.kid !== undefined ? allKeys.get(signOptions.kid) : undefined) ?? current;
    const payload: JWTPayload = { iss: issuer.issuer, ...claims };
    const header: Record<string, unknown> & { alg: string } = { alg: signOptions.alg ?? key.alg, kid: signOptions.kid ?? key.kid, ...signOptions.header };
    if (signOptions.withoutKid === true) delete header.kid;
    return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
  };

  const issuer: LocalIssuer = {
    issuer: `${origin}${prefix}`,
    port,
    discoveryUrl: `${origin}${paths.discovery}`,
    jwksUri: `${origin}${paths.jwks}`,
    movedJwksUri: `${origin}${paths.moved}`,
    requests,
    get currentKid() {
      return current.kid;
    },
    cacheControl: options.cacheControl,
    discoveryOverrides: {},
    fetches: (which) => requests.filter((r) => r.path === paths[which]).length,
    openConnections: () => sockets.size,
    jwks: publicSet,
    async setMode(next, nextScope = 'all') {
      if (next === 'duplicateKid' && decoy === undefined) decoy = await newKey(current.alg, 'decoy');
      if (next === 'down') await stop();
      else if (!server.listening) await listen(port);
      mode = next;
      scope = nextScope;
    },
    sign: signWith,
    kubernetesToken({ subject = 'system:serviceaccount:payments:exporter', audience, lifetime = 3600, now = new Date(), pod = 'exporter-7d9f8b6c5-x2k4q', kid, withoutKid }) {
      const [, , namespace = 'default', name = 'default'] = subject.split(':');
      const iat = Math.floor(now.getTime() / 1000);
      return signWith({
        aud: typeof audience === 'string' ? [audience] : [...audience],
        exp: iat + lifetime,
        iat,
        nbf: iat,
        jti: randomUUID(),
        sub: subject,
        'kubernetes.io': {
          namespace,
          node: { name: 'node-a', uid: randomUUID() },
          pod: { name: pod, uid: randomUUID() },
          serviceaccount: { name, uid: randomUUID() },
          warnafter: iat + Math.min(lifetime, 3607) - 7,
        },
      }, { ...(kid !== undefined && { kid }), ...(withoutKid === true && { withoutKid }) });
    },
    githubActionsToken({ repository = 'acme/billing', ref = 'refs/heads/main', audience, environment, subject, lifetime = 300, now = new Date(), kid }) {
      const iat = Math.floor(now.getTime() / 1000);
      const [owner = 'acme'] = repository.split('/');
      const sha = randomUUID().replace(/-/g, '').padEnd(40, '0');
      const workflowRef = `${repository}/.github/workflows/deploy.yml@${ref}`;
      return signWith(
        {
          jti: randomUUID(),
          sub: subject ?? (environment !== undefined ? `repo:${repository}:environment:${environment}` : `repo:${repository}:ref:${ref}`),
          aud: audience,
          ref,
          sha,
          repository,
          repository_owner: owner,
          repository_owner_id: '1234567',
          run_id: '9876543210',
          run_number: '42',
          run_attempt: '1',
          repository_visibility: 'private',
          repository_id: '7654321',
          actor_id: '1111111',
          actor: 'octocat',
          workflow: 'Deploy',
          head_ref: '',
          base_ref: '',
          event_name: 'push',
          ref_protected: 'true',
          ref_type: 'branch',
          workflow_ref: workflowRef,
          workflow_sha: sha,
          job_workflow_ref: workflowRef,
          job_workflow_sha: sha,
          runner_environment: 'github-hosted',
          ...(environment !== undefined && { environment }),
          iat,
          nbf: iat,
          exp: iat + lifetime,
        },
        { header: { typ: 'JWT', x5t: 'dGVzdC10aHVtYnByaW50' }, ...(kid !== undefined && { kid }) },
      );
    },
    async rotateKeys({ keepOld = false, alg = current.alg } = {}) {
      current = await newKey(alg);
      allKeys.set(current.kid, current);
      published = keepOld ? [current, ...published] : [current];
      return current.kid;
    },
    async close() {
      await stop();
    },
  };
  return issuer;
}
