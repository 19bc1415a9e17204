/**
 * @module admin-schemas
 * The one source of truth for the admin router's wire format: JSON Schemas (written with TypeBox,
 * whose schemas are plain JSON Schema 2020-12 objects) that the router validates requests with and
 * that the OpenAPI document (admin-openapi.ts) publishes as they are. Responses are the admin API's
 * own results (admin-summaries.ts) serialised with `JSON.stringify`; the type checks at the end of
 * this file fail to compile when those results and these schemas drift apart.
 */
import { FEDERATED_LIMITS } from '../federation/address-policy.js';
import { CLAIM_CONDITION_LIMITS } from '../client-auth/claim-conditions.js';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_RESOURCES, MAX_RESOURCE_LENGTH, MAX_TOKEN_LIFETIME } from '../token-grant.js';
import type {
  AccountPolicy,
  AccountResources,
  AccountStatus,
  AccountSummary,
  CreatedAccount,
  CreatedFederatedCredential,
  CreatedKey,
  CreatedSecret,
  RevokedFederatedCredential,
  RevokedKey,
  StaleCredential,
  RevokedSecret,
} from '../admin/admin-summaries.js';
import type { ProblemDetails } from './admin-problem.js';

const closed = { additionalProperties: false } as const;
const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);
const ClientId = Type.String({ description: 'The service account’s client ID (its OAuth `client_id`).' });
const ClientAccountId = Type.Union([Type.String(), Type.Null()], {
  description: 'The client account (customer, tenant) the service account acts for; null for none.',
});
const Scopes = Type.Array(Type.String(), { description: 'Allowed scopes; empty means unrestricted.' });
const Resources = Type.Array(Type.String(), {
  description: 'The resources (APIs, RFC 8707) its tokens may be for, each a token’s `aud`; empty: the server’s own audience.',
});
const ExpiresAt = Type.Union([DateTime, Type.Null()], { description: 'When the credential stops working on its own (docs/rotation.md); null: never.' });
/** When a new credential expires: at most one of the two (neither: never, unless the server's maxCredentialLifetime requires one). */
const ExpiryInput = {
  expiresIn: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,9}[dhms]$' })], {
      description: 'How long from now: whole seconds, or a whole number of days, hours, minutes or seconds (`90d`, `12h`, `30m`, `4s`).',
    }),
  ),
  // Read by the admin API (an RFC 3339 date and time); the validator checks its length only.
  expiresAt: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'When, as an RFC 3339 date and time (`2027-01-01T00:00:00Z`); instead of `expiresIn`.' })),
};
const ResourcesInput = Type.Array(Type.String({ minLength: 1, maxLength: MAX_RESOURCE_LENGTH }), {
  maxItems: MAX_RESOURCES,
  description:
    'The resources (APIs, RFC 8707) its tokens may be for: absolute URIs without fragment, or plain names ' +
    '(letters, digits, `.`, `_`, `~`, `-`). Empty: the server’s own audience. Operators of every client account only.',
});

const AccessTokenLifetime = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: 'Its tokens’ lifetime in seconds (`expires_in`); null: the server’s `tokenLifetime`.',
});
const AccessTokenLifetimeInput = Type.Union([Type.Integer({ minimum: 1, maximum: MAX_TOKEN_LIFETIME }), Type.Null()], {
  description:
    'Its tokens’ lifetime in seconds, at most the server’s `maxAccessTokenLifetime` (a longer one is refused with `invalid_input`); ' +
    'null: the server’s `tokenLifetime`.',
});
const DpopBoundAccessTokens = Type.Boolean({
  description: 'Whether its tokens must be DPoP-bound (RFC 9449 §5.2 `dpop_bound_access_tokens`): a token request without a DPoP proof is refused.',
});

/** A secret as listed: its ID and dates, never its value or hash. */
export const SecretSummarySchema = Type.Object(
  { id: Type.String(), createdAt: DateTime, lastUsedAt: NullableDateTime, revokedAt: NullableDateTime, expiresAt: ExpiresAt },
  { ...closed, title: 'SecretSummary' },
);

/** A public key (key-pair credential) as listed: its ID, thumbprint and dates, never the key itself. */
export const KeySummarySchema = Type.Object(
  {
    id: Type.String(),
    thumbprint: Type.String({ description: 'RFC 7638 SHA-256 JWK thumbprint of the public key, base64url.' }),
    createdAt: DateTime,
    lastUsedAt: NullableDateTime,
    revokedAt: NullableDateTime,
    expiresAt: ExpiresAt,
  },
  { ...closed, title: 'KeySummary' },
);

const FederatedIssuer = Type.String({ description: 'The outside issuer’s identifier, exactly as its tokens carry it in `iss`.' });
const FederatedSubject = Type.String({ description: 'The one subject (`sub`) accepted, compared exactly: no patterns.' });
const FederatedAudience = Type.Union([Type.String(), Type.Null()], {
  description:
    'The audience the outside token must carry in `aud`. For a credential registered without one: this server’s issuer identifier ' +
    '(null only when the admin API does not know it).',
});
const JwksUri = Type.String({ description: 'The issuer’s JWK Set URL; present only when one was given at registration.' });
const ClaimConditions = Type.Record(Type.String(), Type.String(), {
  description:
    'Claim conditions: other claims the outside token must carry with exactly these values, all of them. A name is a top-level claim, ' +
    'or a JSON Pointer (RFC 6901) such as `/kubernetes.io/namespace` for a nested one. Present only when the credential has some.',
});

/** A federated credential as listed: the issuer and exact subject it trusts, and its dates. */
export const FederatedCredentialSummarySchema = Type.Object(
  {
    id: Type.String(),
    issuer: FederatedIssuer,
    subject: FederatedSubject,
    audience: FederatedAudience,
    jwksUri: Type.Optional(JwksUri),
    claims: Type.Optional(ClaimConditions),
    createdAt: DateTime,
    lastUsedAt: NullableDateTime,
    revokedAt: NullableDateTime,
    expiresAt: ExpiresAt,
  },
  { ...closed, title: 'FederatedCredentialSummary' },
);

/** A service account as listed and fetched. */
export const AccountSummarySchema = Type.Object(
  {
    clientId: ClientId,
    name: Type.String({ description: 'Shown in audit logs and activity history.' }),
    clientAccountId: ClientAccountId,
    enabled: Type.Boolean(),
    scopes: Scopes,
    resources: Resources,
    accessTokenLifetime: AccessTokenLifetime,
    dpopBoundAccessTokens: DpopBoundAccessTokens,
    createdAt: DateTime,
    secrets: Type.Array(SecretSummarySchema, { description: 'Every secret, live and revoked, with its last use.' }),
    keys: Type.Array(KeySummarySchema, { description: 'Every public key, live and revoked, with its last use.' }),
    federated: Type.Array(FederatedCredentialSummarySchema, {
      description: 'Every federated credential (trust in an outside issuer for one subject), live and revoked, with its last use.',
    }),
  },
  { ...closed, title: 'AccountSummary' },
);

/** One page of accounts; the next page's address is in the `Link` header (`rel="next"`). */
export const AccountPageSchema = Type.Array(AccountSummarySchema, { title: 'AccountPage' });

/** A new secret: `value` appears in this response only. */
export const CreatedSecretSchema = Type.Object(
  { id: Type.String(), value: Type.String({ description: 'The client secret, shown this once.' }), expiresAt: ExpiresAt },
  { ...closed, title: 'CreatedSecret' },
);

/** A new account and its first secret. */
export const CreatedAccountSchema = Type.Object(
  {
    clientId: ClientId,
    name: Type.String(),
    clientAccountId: ClientAccountId,
    scopes: Scopes,
    resources: Resources,
    accessTokenLifetime: AccessTokenLifetime,
    dpopBoundAccessTokens: DpopBoundAccessTokens,
    secret: CreatedSecretSchema,
    client_secret_expires_at: Type.Integer({
      minimum: 0,
      description: 'When the secret expires, in seconds since the epoch; 0 when it never does (RFC 7591 §3.2.1).',
    }),
  },
  { ...closed, title: 'CreatedAccount' },
);

/** A revoked secret. */
export const RevokedSecretSchema = Type.Object(
  { clientId: ClientId, secretId: Type.String(), revokedAt: DateTime },
  { ...closed, title: 'RevokedSecret' },
);

/** A new public key (key-pair credential). */
export const CreatedKeySchema = Type.Object(
  { id: Type.String(), thumbprint: Type.String({ description: 'RFC 7638 SHA-256 JWK thumbprint of the public key, base64url.' }), createdAt: DateTime, expiresAt: ExpiresAt },
  { ...closed, title: 'CreatedKey' },
);

/** A revoked public key. */
export const RevokedKeySchema = Type.Object({ clientId: ClientId, keyId: Type.String(), revokedAt: DateTime }, { ...closed, title: 'RevokedKey' });

/** A new federated credential. */
export const CreatedFederatedCredentialSchema = Type.Omit(FederatedCredentialSummarySchema, ['lastUsedAt', 'revokedAt'], {
  ...closed,
  title: 'CreatedFederatedCredential',
});

/** A revoked federated credential. */
export const RevokedFederatedCredentialSchema = Type.Object(
  { clientId: ClientId, credentialId: Type.String(), revokedAt: DateTime },
  { ...closed, title: 'RevokedFederatedCredential' },
);

/** An account's resources after they were set. */
export const AccountResourcesSchema = Type.Object({ clientId: ClientId, resources: Resources }, { ...closed, title: 'AccountResources' });

/** `POST /service-accounts/{clientId}/resources`. */
export const SetResourcesBodySchema = Type.Object({ resources: ResourcesInput }, { ...closed, title: 'SetResourcesRequest' });

/** An account's token policy after it was changed. */
export const AccountPolicySchema = Type.Object(
  { clientId: ClientId, accessTokenLifetime: AccessTokenLifetime, dpopBoundAccessTokens: DpopBoundAccessTokens },
  { ...closed, title: 'AccountPolicy' },
);

/** `POST /service-accounts/{clientId}/policy`: the fields given change, the others keep their value. */
export const SetPolicyBodySchema = Type.Object(
  { accessTokenLifetime: Type.Optional(AccessTokenLifetimeInput), dpopBoundAccessTokens: Type.Optional(DpopBoundAccessTokens) },
  { ...closed, minProperties: 1, title: 'SetPolicyRequest' },
);

/** An account's state after `disable` or `enable`. */
export const AccountStatusSchema = Type.Object({ clientId: ClientId, enabled: Type.Boolean() }, { ...closed, title: 'AccountStatus' });

/** RFC 9457 problem details. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri', description: 'Stable URI of the problem type, documented in docs/errors.md.' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          { pointer: Type.String({ description: 'JSON Pointer (RFC 6901) to the refused value.' }), detail: Type.String() },
          closed,
        ),
      ),
    ),
  },
  { ...closed, title: 'Problem' },
);

/** `POST /service-accounts`. */
export const CreateAccountBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: '1–200 printable characters; never a secret or a client ID.' }),
    clientAccountId: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
        description: 'Defaults to the caller’s own client account; only an all-tenants operator may name another (or null).',
      }),
    ),
    scopes: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 }), Type.String({ minLength: 1, maxLength: 4000, pattern: '\\S' })], {
        description: 'Allowed scopes, as an array or one space-separated string (RFC 6749 §3.3); none means unrestricted.',
      }),
    ),
    resources: Type.Optional(ResourcesInput),
    accessTokenLifetime: Type.Optional(AccessTokenLifetimeInput),
    dpopBoundAccessTokens: Type.Optional(DpopBoundAccessTokens),
    secret: Type.Optional(Type.Object(ExpiryInput, { ...closed, description: 'When its first secret expires.' })),
  },
  { ...closed, title: 'CreateAccountRequest' },
);

/** `POST /service-accounts/{clientId}/keys`. */
export const AddKeyBodySchema = Type.Object(
  {
    publicKey: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 12000 }),
        Type.Object({}, { additionalProperties: true }),
      ],
      {
        description:
          'The client’s public key: PEM text (`PUBLIC KEY`, `RSA PUBLIC KEY` or a `CERTIFICATE`), the JSON text of a JWK or of a ' +
          'JWK Set holding one key, or such a JWK or JWK Set object. EC P-256, RSA of 2048 bits or more, or Ed25519; a private key is refused and never stored.',
      },
    ),
    ...ExpiryInput,
  },
  { ...closed, title: 'AddKeyRequest' },
);

const FederatedUrl = { minLength: 1, maxLength: FEDERATED_LIMITS.jwksUri } as const;

/** `POST /service-accounts/{clientId}/federated`. */
export const AddFederatedCredentialBodySchema = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: FEDERATED_LIMITS.issuer,
      description: 'The outside issuer’s identifier, exactly as its tokens carry it in `iss`: an https URL (http only on a loopback host), without query or fragment.',
    }),
    subject: Type.String({
      minLength: 1,
      maxLength: FEDERATED_LIMITS.subjectBytes,
      description: `The one subject (\`sub\`) accepted, compared exactly; 1–${FEDERATED_LIMITS.subjectBytes} bytes (UTF-8) of printable characters. Patterns (\`*\`) are refused.`,
    }),
    audience: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: FEDERATED_LIMITS.audienceBytes }), Type.Null()], {
        description: 'The audience the outside token must carry in `aud`. Default (left out or null): this server’s issuer identifier.',
      }),
    ),
    jwksUri: Type.Optional(
      Type.Union([Type.String(FederatedUrl), Type.Null()], {
        description: 'The issuer’s JWK Set URL, for an issuer without OpenID Connect discovery; same rules as `issuer`, except that it may have a query.',
      }),
    ),
    claims: Type.Optional(
      Type.Union(
        [
          Type.Record(
            Type.String({ minLength: 1, maxLength: CLAIM_CONDITION_LIMITS.nameBytes }),
            Type.String({ minLength: 1, maxLength: CLAIM_CONDITION_LIMITS.valueBytes }),
            { maxProperties: CLAIM_CONDITION_LIMITS.conditions },
          ),
          Type.Null(),
        ],
        {
          description:
            'Claim conditions: other claims the outside token must carry, with exactly these values, all of them (GitHub Actions: ' +
            '`{"repository_owner": "acme", "environment": "production"}`). A name is a top-level claim, or a JSON Pointer (RFC 6901) for a nested ' +
            'one (`/kubernetes.io/namespace`); not `iss`, `sub`, `aud`, `exp`, `nbf`, `iat` or `jti`. A string claim must equal the value, a boolean ' +
            `claim matches \`true\` or \`false\`, any other claim never matches. At most ${CLAIM_CONDITION_LIMITS.conditions} conditions; patterns (\`*\`) are refused.`,
        },
      ),
    ),
    ...ExpiryInput,
  },
  { ...closed, title: 'AddFederatedCredentialRequest' },
);

/** Operations that take no input accept no body, or an empty JSON object. */
const DurationText = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,9}[dhms]$', description });

export const StaleQuerySchema = Type.Object(
  {
    expiringWithin: Type.Optional(DurationText('Credentials that expire within this long (`14d`, `12h`, `30m`, `4s`), or have expired.')),
    unusedFor: Type.Optional(DurationText('Credentials last used (never used: created) at least this long ago (`30d`, ...).')),
  },
  closed,
);

export const StaleCredentialSchema = Type.Object(
  {
    clientId: ClientId,
    name: Type.String({ description: 'The account’s name.' }),
    clientAccountId: ClientAccountId,
    kind: Type.Union([Type.Literal('secret'), Type.Literal('key'), Type.Literal('federated')]),
    id: Type.String(),
    createdAt: DateTime,
    lastUsedAt: NullableDateTime,
    expiresAt: ExpiresAt,
    reasons: Type.Array(Type.Union([Type.Literal('expired'), Type.Literal('expiring'), Type.Literal('unused')]), {
      description: '`expired`: past its expiry (refused) yet not revoked; `expiring`: within `expiringWithin`; `unused`: for `unusedFor`.',
    }),
  },
  { ...closed, title: 'StaleCredential' },
);

export const StaleCredentialListSchema = Type.Array(StaleCredentialSchema, { title: 'StaleCredentialList' });

export const AddSecretBodySchema = Type.Object(ExpiryInput, { ...closed, title: 'AddSecretRequest' });

export const EmptyBodySchema = Type.Object({}, { ...closed, title: 'EmptyRequest' });

/** The query of `GET /service-accounts`. */
export const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Accounts per page.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'From the previous page’s `Link: <…>; rel="next"`.' })),
    clientAccountId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'All-tenants operators only: list this client account only.' }),
    ),
  },
  closed,
);

/** The list query once checked. */
export type ListQuery = Static<typeof ListQuerySchema>;
/** The create body once checked. */
export type CreateAccountBody = Static<typeof CreateAccountBodySchema>;
/** The set-policy body once checked. */
export type SetPolicyBody = Static<typeof SetPolicyBodySchema>;
/** The set-resources body once checked. */
export type SetResourcesBody = Static<typeof SetResourcesBodySchema>;
/** The add-key body once checked. */
export type AddKeyBody = Static<typeof AddKeyBodySchema>;
/** The add-federated-credential body once checked. */
export type AddFederatedCredentialBody = Static<typeof AddFederatedCredentialBodySchema>;
export type AddSecretBody = Static<typeof AddSecretBodySchema>;
export type StaleQuery = Static<typeof StaleQuerySchema>;

/** Every named schema, as the OpenAPI document's `components.schemas` lists them. */
export const NAMED_SCHEMAS: ReadonlyMap<TSchema, string> = new Map<TSchema, string>([
  [AccountSummarySchema, 'AccountSummary'],
  [AccountPageSchema, 'AccountPage'],
  [SecretSummarySchema, 'SecretSummary'],
  [KeySummarySchema, 'KeySummary'],
  [CreatedKeySchema, 'CreatedKey'],
  [RevokedKeySchema, 'RevokedKey'],
  [AddKeyBodySchema, 'AddKeyRequest'],
  [FederatedCredentialSummarySchema, 'FederatedCredentialSummary'],
  [CreatedFederatedCredentialSchema, 'CreatedFederatedCredential'],
  [RevokedFederatedCredentialSchema, 'RevokedFederatedCredential'],
  [AddFederatedCredentialBodySchema, 'AddFederatedCredentialRequest'],
  [CreatedAccountSchema, 'CreatedAccount'],
  [CreatedSecretSchema, 'CreatedSecret'],
  [RevokedSecretSchema, 'RevokedSecret'],
  [AccountStatusSchema, 'AccountStatus'],
  [AccountResourcesSchema, 'AccountResources'],
  [SetResourcesBodySchema, 'SetResourcesRequest'],
  [AccountPolicySchema, 'AccountPolicy'],
  [SetPolicyBodySchema, 'SetPolicyRequest'],
  [ProblemSchema, 'Problem'],
  [CreateAccountBodySchema, 'CreateAccountRequest'],
  [EmptyBodySchema, 'EmptyRequest'],
  [AddSecretBodySchema, 'AddSecretRequest'],
  [StaleCredentialSchema, 'StaleCredential'],
  [StaleCredentialListSchema, 'StaleCredentialList'],
]);

// Compile-time ties between the admin API's results as JSON and the schemas above: adding a field to
// an AccountSummary (or any result) without adding it here stops the build.
type AsJson<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? AsJson<U>[]
    : T extends object
      ? { -readonly [K in keyof T]: AsJson<T[K]> }
      : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemasMatchResults: [
  Same<AsJson<AccountSummary>, Static<typeof AccountSummarySchema>>,
  Same<AsJson<CreatedAccount> & { client_secret_expires_at: number }, Static<typeof CreatedAccountSchema>>,
  Same<AsJson<CreatedSecret>, Static<typeof CreatedSecretSchema>>,
  Same<AsJson<RevokedSecret>, Static<typeof RevokedSecretSchema>>,
  Same<AsJson<CreatedKey>, Static<typeof CreatedKeySchema>>,
  Same<AsJson<RevokedKey>, Static<typeof RevokedKeySchema>>,
  Same<AsJson<CreatedFederatedCredential>, Static<typeof CreatedFederatedCredentialSchema>>,
  Same<AsJson<RevokedFederatedCredential>, Static<typeof RevokedFederatedCredentialSchema>>,
  Same<AsJson<AccountStatus>, Static<typeof AccountStatusSchema>>,
  Same<AsJson<AccountResources>, Static<typeof AccountResourcesSchema>>,
  Same<AsJson<AccountPolicy>, Static<typeof AccountPolicySchema>>,
  Same<AsJson<StaleCredential>, Static<typeof StaleCredentialSchema>>,
  Same<AsJson<ProblemDetails>, Static<typeof ProblemSchema>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true];
void schemasMatchResults;
