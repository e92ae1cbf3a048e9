import { tenantTypes } from '../storage/tenants.ts';
import { roles } from '../storage/users.ts';
import { maybeTimestamp, timestamp } from './openapi-envelopes.ts';
import { exact, ref } from './schemas.ts';

/** Who calls, in the OpenAPI document: API keys and their usage, people, their sessions and the keys that verify them. */

const apiKeyProperties = {
  id: { type: 'string', examples: ['key_01jd8x2m4q7v9c3b5n6p8r0t2w'] },
  tenant_id: { type: 'string' },
  name: { type: 'string' },
  prefix: { type: 'string', description: '`ix_live_`, `ix_test_`, or a legacy `ix_prod_`/`ix_dev_`.' },
  start: { type: 'string', description: 'The first 12 characters of the key.' },
  last4: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string' } },
  expires_at: maybeTimestamp,
  rate_limit_per_minute: { type: 'integer' },
  legacy: { type: 'boolean' },
  created_at: timestamp,
  revoked_at: maybeTimestamp,
  rotated_to: { type: ['string', 'null'], description: 'The id of the key this one was rotated to.' },
  created_by: {
    type: ['string', 'null'],
    description: 'The user who created the key (or its predecessor) signed in; null for a key or the CLI.',
  },
  usage: exact({ last_used_at: maybeTimestamp, last_used_ip: { type: ['string', 'null'] }, request_count: { type: 'integer' } }),
} as const;

const apiKeyExample = {
  id: 'key_01jd8x2m4q7v9c3b5n6p8r0t2w',
  tenant_id: 'acme',
  name: 'crm sync',
  prefix: 'ix_live_',
  start: 'ix_live_Ab3d',
  last4: 'x9Zq',
  scopes: ['integrations.execute'],
  expires_at: null,
  rate_limit_per_minute: 600,
  legacy: false,
  created_at: '2026-11-21T09:30:00.000Z',
  revoked_at: null,
  rotated_to: null,
  created_by: null,
  usage: { last_used_at: null, last_used_ip: null, request_count: 0 },
};

export const apiKey = {
  $id: 'ApiKey',
  description: 'An API key; never its secret.',
  ...exact(apiKeyProperties),
  examples: [apiKeyExample],
};

export const newApiKey = {
  $id: 'NewApiKey',
  description: 'A key just created or rotated, with its secret: the only time `key` is shown.',
  ...exact({ ...apiKeyProperties, key: { type: 'string', description: 'The key itself; send it as X-API-Key.' } }),
  examples: [{ ...apiKeyExample, key: 'ix_live_4fQ8pZk2LmN7xR1vB9cT3wY6hJ0sD5gE2aK8uq1Xy' }],
};

export const usageDay = {
  $id: 'ApiKeyUsageDay',
  ...exact({
    date: { type: 'string', format: 'date' },
    requests: { type: 'integer' },
    errors: { type: 'integer', description: 'Authenticated requests answered with a non-2xx status.' },
  }),
  examples: [{ date: '2026-11-21', requests: 12, errors: 1 }],
};

const tenantSummary = exact({ id: { type: 'string' }, name: { type: 'string' }, type: { type: 'string', enum: tenantTypes } });

export const user = {
  $id: 'User',
  description: 'A person who signs in; never their password.',
  ...exact({ id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, created_at: timestamp }),
  examples: [
    { id: 'usr_01jd8x2m4q7v9c3b5n6p8r0t2w', email: 'ada@example.com', name: 'Ada', created_at: '2026-11-21T09:30:00.000Z' },
  ],
};

export const me = {
  $id: 'Me',
  description: 'The caller: a key (`key`, `tenant`) or a signed-in person (`user`, `tenant`, `role`).',
  anyOf: [
    exact({ key: ref('ApiKey'), tenant: tenantSummary }),
    exact({ user: ref('User'), tenant: tenantSummary, role: { type: 'string', enum: roles } }),
  ],
};

export const session = {
  $id: 'Session',
  description:
    'A signed-in session: a short-lived access token (send it as `Authorization: Bearer`, with X-Tenant-ID) and a ' +
    'refresh token (also set as the `ix_refresh` cookie), each usable once.',
  ...exact({
    access_token: { type: 'string', description: 'A JWT (EdDSA), verifiable with /.well-known/jwks.json.' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds the access token lives.' },
    refresh_token: { type: 'string', description: 'Spent by its first use; a second use ends the session.' },
    user: ref('User'),
    memberships: {
      type: 'array',
      items: exact({ tenant_id: { type: 'string' }, tenant_name: { type: 'string' }, role: { type: 'string', enum: roles } }),
    },
  }),
};

export const jwks = {
  $id: 'JwkSet',
  description: 'The public keys that verify access tokens (RFC 7517): the current one and those retired within the last hour.',
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'kid', 'alg', 'use'],
        additionalProperties: false,
        properties: {
          kty: { type: 'string' },
          crv: { type: 'string' },
          x: { type: 'string' },
          kid: { type: 'string' },
          alg: { type: 'string' },
          use: { type: 'string' },
        },
      },
    },
  },
  examples: [
    {
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
          kid: 'sig_01jd8x2m4q7v9c3b5n6p8r0t2w',
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    },
  ],
};
