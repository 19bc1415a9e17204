/**
 * @module credential-routes
 * The admin router's operations on credentials: adding one and revoking one, for every kind. Each
 * kind's path segment and store-method names (which the admin API's methods share) come from its row
 * of `CREDENTIAL_KINDS`; what is said about it, its body and its answers are a row of
 * {@link KIND_ROUTES}.
 */
import type { TSchema } from '@sinclair/typebox';
import { CREDENTIAL_KINDS, type CredentialKindName } from '../store/credential-kinds.js';
import { CHANGE_PROBLEMS, type AdminRoute } from './admin-route.js';
import {
  AddFederatedCredentialBodySchema,
  AddKeyBodySchema,
  AddSecretBodySchema,
  CreatedFederatedCredentialSchema,
  CreatedKeySchema,
  CreatedSecretSchema,
  RevokedFederatedCredentialSchema,
  RevokedKeySchema,
  RevokedSecretSchema,
} from './admin-schemas.js';

/** What the routes of one credential kind say and answer. */
interface KindRoutes {
  /** In the summaries: `a secret`. */
  readonly noun: string;
  /** In the answers' descriptions: `secret`, `key`. */
  readonly thing: string;
  /** The path parameter of its ID. */
  readonly idParam: string;
  readonly add: { readonly description: string; readonly body: TSchema; readonly bodyOptional?: boolean; readonly schema: TSchema };
  readonly revoke: { readonly description: string; readonly schema: TSchema };
}

/**
 * Each kind's texts, body and answers, in the order the operations are listed.
 *
 * @example
 * ```ts
 * const { idParam } = KIND_ROUTES.key // 'keyId'
 * ```
 */
export const KIND_ROUTES: { readonly [K in CredentialKindName]: KindRoutes } = {
  secret: {
    noun: 'a secret',
    thing: 'secret',
    idParam: 'secretId',
    add: {
      description:
        'Adds a secret for rotation; the others keep working until revoked. The value is in this response only. ' +
        'With `expiresIn` or `expiresAt`, the secret stops working on its own at that time (required, and bounded, when the ' +
        'server sets `maxCredentialLifetime`). Refused past the configured number of live secrets.',
      body: AddSecretBodySchema,
      bodyOptional: true,
      schema: CreatedSecretSchema,
    },
    revoke: {
      description: 'Revokes a secret and every token issued against it, on every server sharing the store within a second.',
      schema: RevokedSecretSchema,
    },
  },
  key: {
    noun: 'a public key',
    thing: 'key',
    idParam: 'keyId',
    add: {
      description:
        'Registers the client’s public key as a credential of the account, for `private_key_jwt` (RFC 7523): the client signs ' +
        'its token requests with the private key, which never leaves it. A private key is refused and never stored. ' +
        'Counts against the same limit as secrets.',
      body: AddKeyBodySchema,
      schema: CreatedKeySchema,
    },
    revoke: {
      description: 'Assertions the key signs are refused, and so is every token issued against it, on every server sharing the store within a second.',
      schema: RevokedKeySchema,
    },
  },
  federated: {
    noun: 'a federated credential',
    thing: 'federated credential',
    idParam: 'credentialId',
    add: {
      description:
        'Trusts an outside issuer’s tokens (a Kubernetes cluster, GitHub Actions, any OpenID Connect provider) for one exact ' +
        'subject as a credential of the account: the workload authenticates with the token its platform gives it, and no ' +
        'secret is stored. Subject patterns are refused. Without `audience`, the outside token must be issued for this ' +
        'server’s issuer identifier. Counts against the same limit as secrets.',
      body: AddFederatedCredentialBodySchema,
      schema: CreatedFederatedCredentialSchema,
    },
    revoke: {
      description:
        'The issuer’s tokens no longer authenticate the account through this credential, and every token issued against it ' +
        'is refused on every server sharing the store within a second.',
      schema: RevokedFederatedCredentialSchema,
    },
  },
};

/** The admin API's add and revoke methods, by the names the kind's descriptor gives (`addKey`, `revokeKey`). */
type KindMethod = (clientId: string, value: unknown) => Promise<unknown>;

/** The add and revoke operations of one kind. */
function routesOf(kind: CredentialKindName): AdminRoute[] {
  const { field, add, revoke } = CREDENTIAL_KINDS[kind];
  const { noun, thing, idParam, add: adding, revoke: revoking } = KIND_ROUTES[kind];
  const path = `/service-accounts/{clientId}/${field}`;
  // The admin API names its methods as the store does (addKey, revokeKey, ...).
  const method = (admin: object, name: string) => (admin as Record<string, KindMethod>)[name] as KindMethod;
  return [
    {
      method: 'POST',
      path,
      operationId: `addServiceAccount${add.slice('add'.length)}`,
      summary: `Add ${noun}`,
      description: adding.description,
      body: adding.body,
      ...(adding.bodyOptional === true && { bodyOptional: true }),
      success: { status: 201, description: `The new ${thing}.`, schema: adding.schema },
      // 501 when the store cannot hold the kind, an expiry or claim conditions.
      problems: [...CHANGE_PROBLEMS, 'secret-limit-reached', 'not-implemented'],
      handle: async ({ admin, params, body }) => ({ status: 201, body: await method(admin, add).call(admin, params.clientId!, body) }),
    },
    {
      method: 'DELETE',
      path: `${path}/{${idParam}}`,
      operationId: `revokeServiceAccount${revoke.slice('revoke'.length)}`,
      summary: `Revoke ${noun}`,
      description: revoking.description,
      success: { status: 200, description: `The revoked ${thing}.`, schema: revoking.schema },
      problems: CHANGE_PROBLEMS,
      handle: async ({ admin, params }) => ({ status: 200, body: await method(admin, revoke).call(admin, params.clientId!, params[idParam]) }),
    },
  ];
}

/**
 * The add and revoke operations of every kind, in the order of {@link KIND_ROUTES}.
 *
 * @example
 * ```ts
 * const operationIds = CREDENTIAL_ROUTES.map((route) => route.operationId) // addServiceAccountSecret, revokeServiceAccountSecret, ...
 * ```
 */
export const CREDENTIAL_ROUTES: readonly AdminRoute[] = (Object.keys(KIND_ROUTES) as CredentialKindName[]).flatMap(routesOf);
