import { auditActions } from '../audit/audit-log.ts';
import { timestamp } from './openapi-envelopes.ts';
import { exact } from './schemas.ts';

/** An audit event in the OpenAPI document (docs/audit.md#the-event). */
export const auditEvent = {
  $id: 'AuditEvent',
  description: 'One change: who made it, from where, to what, and which fields changed; never a value of a secret.',
  ...exact({
    id: { type: 'string', examples: ['aud_0mx1c2d3e4f5g6h7i8j9k0l1m'] },
    at: { ...timestamp, description: 'When the change was committed.' },
    action: { type: 'string', enum: [...auditActions] },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: {
        type: { type: 'string', enum: ['api_key', 'user', 'cli', 'system'] },
        id: {
          type: 'string',
          description: 'The key id, the user id, the operating-system account of the CLI, or what in the service.',
        },
        name: { type: 'string', description: 'The key’s name, the person’s name (or email), `account@host` for the CLI.' },
      },
    },
    ip: { type: ['string', 'null'], description: 'The client address the change came from; null for the CLI and the service.' },
    request_id: { type: ['string', 'null'], description: 'The request’s `X-Request-ID` (one `cli_…` id per CLI command).' },
    target: exact({
      type: { type: 'string', description: '`api_key`, `integration`, `webhook`, `user`, `tenant` or `signing_key`.' },
      id: { type: 'string' },
    }),
    changes: {
      type: 'array',
      items: { type: 'string' },
      description: 'The paths of the fields that changed (`config.base_url`, `config.auth.client_secret`); never a value.',
    },
  }),
  examples: [
    {
      id: 'aud_0mx1c2d3e4f5g6h7i8j9k0l1m',
      at: '2026-11-29T09:30:00.000Z',
      action: 'integration.updated',
      actor: { type: 'user', id: 'usr_0mx0t7r2k4q6w8e0r2t4y6u8i', name: 'Ada Lovelace' },
      ip: '203.0.113.7',
      request_id: 'req-7f3a',
      target: { type: 'integration', id: 'crm' },
      changes: ['config.auth.client_secret', 'config.base_url'],
    },
  ],
};
