import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AuditChange, changedPaths, inTransaction, recordChange, requestSource } from '../audit/audit-log.ts';
import { caller } from '../auth/authenticate.ts';
import type { ConnectorDefinition } from '../connectors/connector.ts';
import { applyConfigWrite, changedSecretPaths, integrationView } from '../connectors/integration-config.ts';
import type { AppContext } from '../context.ts';
import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';
import { checkPreconditions, etagOf } from '../http/conditional.ts';
import { ok, okList } from '../http/envelope.ts';
import { catalogIssues, mergeCatalog } from '../integrations/catalog-settings.ts';
import { integrationKey } from '../resilience/config.ts';
import {
  deleteIntegration,
  findIntegration,
  type IntegrationWrite,
  listIntegrations,
  type StoredIntegration,
  saveIntegration,
} from '../storage/integrations.ts';
import { integrationPatchBody, integrationPutBody } from './openapi-integration-bodies.ts';
import { bodyFailures, documentedBody, failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Integrations'];
const params = idParams('id');
const name = { type: 'string', minLength: 1, maxLength: 200 } as const;

interface PutBody {
  name?: string;
  connector: string;
  config?: Record<string, unknown>;
  catalog?: Record<string, unknown>;
}

interface PatchBody {
  name?: string;
  config?: Record<string, unknown>;
  catalog?: Record<string, unknown>;
}

/** What a write stores: the integration's name, connector, config as written and `catalog` (merged for a PATCH). */
interface WritePlan {
  name: string;
  definition: ConnectorDefinition;
  config: Record<string, unknown> | undefined;
  catalog: Record<string, unknown>;
  merge: boolean;
}

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

function definitionFor(ctx: AppContext, id: string): ConnectorDefinition {
  const definition = ctx.registry.get(id);
  if (!definition) {
    const ids = ctx.registry.ids.join(', ');
    throw validationFailed(
      [{ path: 'connector', message: `unknown connector; supported: ${ids}` }],
      `Unknown connector ${id}; supported: ${ids}.`,
    );
  }
  return definition;
}

const noSuchIntegration = { 404: 'No such integration in this tenant.' } as const;
const configInvalid = {
  400: 'The request is invalid: `validation_failed` (every problem in `details.issues`: an unknown connector, a config field that does not fit the connector, a secret to send again when a URL changes origin), `invalid_json` or `missing_tenant`.',
  409: '`conflict`: other requests kept changing the integration; try again.',
} as const;

function notFound(id: string): ApiError {
  return new ApiError('not_found', `No integration ${id}.`);
}

/** A written `catalog` (docs/catalog.md), or `validation_failed` with every problem; documents checked by the connector. */
function checkCatalog(
  definition: ConnectorDefinition,
  catalog: Record<string, unknown>,
  againstSchema?: (documents: unknown) => ValidationIssue[],
): void {
  const issues = catalogIssues(catalog, { documents: definition.catalogDocumentIssues !== undefined });
  if (definition.catalogDocumentIssues && Array.isArray(catalog.documents)) {
    issues.push(...(againstSchema ?? definition.catalogDocumentIssues)(catalog.documents));
  }
  if (issues.length > 0) throw validationFailed(issues, 'The catalog settings are invalid.');
}

/** Five writes in a row lost their race with other requests' (a write and a delete retry alike). */
function changedByOthers(id: string): ApiError {
  return new ApiError('conflict', `Integration ${id} is being changed by another request; try again.`);
}

/** The conditional headers a write takes (docs/api.md#conditional-requests). */
const conditionalHeaders = (ifNoneMatch: boolean) => ({
  type: 'object',
  properties: {
    'if-match': {
      type: 'string',
      description: 'The `ETag` the change was based on (or `*`): a newer version is `412 precondition_failed`, nothing changed.',
    },
    ...(ifNoneMatch && {
      'if-none-match': { type: 'string', description: '`*`: create only; an existing integration is `412 precondition_failed`.' },
    }),
  },
});

/** Every integration answer names its version. */
const etagHeader = { ETag: { type: 'string', description: 'The integration’s version, for `If-Match`.' } };

const conditionalFailure = {
  412: '`precondition_failed`: `If-None-Match: *` met an existing integration, or `If-Match` did not name its current version (`details.etag`); nothing was changed.',
} as const;

/**
 * Writes with optimistic concurrency: a change that lands between our read and our write makes us
 * read again and re-apply, so two PATCHes never lose each other's fields.
 */
async function writeIntegration(
  ctx: AppContext,
  request: IdRequest,
  build: (existing: StoredIntegration | undefined) => Promise<WritePlan>,
  checkDocuments?: DocumentsCheck,
) {
  const { tenantId } = caller(request);
  const id = request.params.id;
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = await findIntegration(ctx.storage.db, tenantId, id);
    const plan = await build(existing);
    // The upstream's schema kept for the integration as stored: only when the write leaves its config as it is.
    const sameUpstream = existing && plan.merge && plan.config === undefined;
    checkCatalog(
      plan.definition,
      plan.catalog,
      sameUpstream && checkDocuments ? (documents) => checkDocuments(existing, documents) : undefined,
    );
    // Against the version this attempt will write over: a change landing in between is met on the next attempt.
    checkPreconditions(request.headers, existing);
    const target = { tenantId, id, masterKey: ctx.masterKey };
    const previous = plan.merge && existing ? existing : undefined;
    const { config, secrets } = applyConfigWrite(plan.definition, target, plan.config ?? {}, previous);
    const write = { name: plan.name, connector: plan.definition.id, config, secrets, catalog: plan.catalog };
    const change = integrationChange(target, existing, write, plan.merge);
    const saved = await inTransaction(ctx.storage.db, async (tx) => {
      const stored = await saveIntegration(tx, tenantId, id, write, existing);
      if (stored) await recordChange(tx, tenantId, requestSource(request), change);
      return stored;
    });
    if (saved) {
      ctx.integrations.forget(tenantId, id);
      // A changed integration starts with a closed breaker: the change may be the fix (docs/resilience.md).
      await ctx.breakers.forget(integrationKey(tenantId, id));
      return { saved, created: !existing, definition: plan.definition };
    }
  }
  throw changedByOthers(id);
}

/**
 * A write's audit event: `integration.created`, `.replaced` (PUT) or `.updated` (PATCH), naming the fields that
 * changed (`config.base_url`, `config.auth.client_secret`, `catalog.descriptions`) and never a value.
 */
function integrationChange(
  target: { tenantId: string; id: string; masterKey: Buffer },
  existing: StoredIntegration | undefined,
  write: IntegrationWrite,
  merge: boolean,
): AuditChange {
  const fields = (i: Pick<IntegrationWrite, 'name' | 'connector' | 'config' | 'catalog'> | undefined) =>
    i && { name: i.name, connector: i.connector, config: i.config, catalog: i.catalog };
  const secrets = changedSecretPaths(target, existing?.secrets ?? {}, write.secrets).map((path) => `config.${path}`);
  const changes = [...changedPaths(fields(existing), fields(write), ''), ...secrets].sort();
  const action = !existing ? 'integration.created' : merge ? 'integration.updated' : 'integration.replaced';
  return { action, target: { type: 'integration', id: target.id }, changes };
}

/**
 * The problems of a PATCH's `catalog.documents` against the upstream's schema kept for the integration as it is (none
 * when none is kept).
 */
export type DocumentsCheck = (stored: StoredIntegration, documents: unknown) => ValidationIssue[];

export function registerIntegrationRoutes(app: FastifyInstance, ctx: AppContext, checkDocuments: DocumentsCheck): void {
  const db = ctx.storage.db;

  app.put<{ Params: { id: string }; Body: PutBody }>(
    '/api/v1/integrations/:id',
    {
      config: { scope: 'integrations.write', swaggerTransform: documentedBody(integrationPutBody(ctx.registry)) },
      schema: {
        tags,
        security,
        operationId: 'putIntegration',
        summary:
          'Create (201) or replace (200) the whole integration; a secret left out is cleared. `If-None-Match: *` creates only.',
        params,
        headers: conditionalHeaders(true),
        body: {
          type: 'object',
          required: ['connector'],
          additionalProperties: false,
          properties: {
            name,
            connector: { type: 'string', enum: ctx.registry.ids },
            config: { type: 'object' },
            catalog: { type: 'object' },
          },
        },
        response: {
          200: { ...reply('IntegrationReply', 'The integration was replaced.'), headers: etagHeader },
          201: { ...reply('IntegrationReply', 'The integration was created.'), headers: etagHeader },
          ...failures([...tenantFailures, ...bodyFailures, 409, 412], { ...configInvalid, ...conditionalFailure }),
        },
      },
    },
    async (request, reply) => {
      const { saved, created, definition } = await writeIntegration(ctx, request, async () => ({
        name: request.body.name ?? request.params.id,
        definition: definitionFor(ctx, request.body.connector),
        config: request.body.config,
        catalog: request.body.catalog ?? {},
        merge: false,
      }));
      return reply
        .code(created ? 201 : 200)
        .header('etag', etagOf(saved))
        .send(ok(integrationView(definition, saved)));
    },
  );

  app.patch<{ Params: { id: string }; Body: PatchBody }>(
    '/api/v1/integrations/:id',
    {
      config: { scope: 'integrations.write', swaggerTransform: documentedBody(integrationPatchBody(ctx.registry)) },
      schema: {
        tags,
        security,
        operationId: 'updateIntegration',
        summary:
          'Merge config fields; a secret left out is kept, null or "" clears it, and must be sent again when a URL changes origin.',
        params,
        headers: conditionalHeaders(false),
        body: {
          type: 'object',
          minProperties: 1,
          additionalProperties: false,
          properties: { name, config: { type: 'object' }, catalog: { type: 'object' } },
        },
        response: {
          200: { ...reply('IntegrationReply', 'The integration as changed.'), headers: etagHeader },
          ...failures([...tenantFailures, ...bodyFailures, 404, 409, 412], {
            ...configInvalid,
            ...noSuchIntegration,
            ...conditionalFailure,
          }),
        },
      },
    },
    async (request, reply) => {
      const { saved, definition } = await writeIntegration(
        ctx,
        request,
        async (existing) => {
          if (!existing) throw notFound(request.params.id);
          return {
            name: request.body.name ?? existing.name,
            definition: definitionFor(ctx, existing.connector),
            config: request.body.config,
            catalog: request.body.catalog === undefined ? existing.catalog : mergeCatalog(existing.catalog, request.body.catalog),
            merge: true,
          };
        },
        checkDocuments,
      );
      reply.header('etag', etagOf(saved));
      return ok(integrationView(definition, saved));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/integrations/:id',
    {
      config: { scope: 'integrations.read' },
      schema: {
        tags,
        security,
        operationId: 'getIntegration',
        summary: 'One integration.',
        params,
        response: {
          200: { ...reply('IntegrationReply', 'The integration.'), headers: etagHeader },
          ...failures([...tenantFailures, 404], noSuchIntegration),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = caller(request);
      const stored = await findIntegration(db, tenantId, request.params.id);
      if (!stored) throw notFound(request.params.id);
      reply.header('etag', etagOf(stored));
      const definition = ctx.registry.get(stored.connector);
      if (!definition) return ok(integrationView(definition, stored));
      // Its circuit breaker, as its next call would find it (docs/resilience.md#circuit-breaker).
      const circuit = await ctx.breakers.state(integrationKey(tenantId, stored.id));
      return ok({ ...integrationView(definition, stored), circuit });
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/integrations',
    {
      config: { scope: 'integrations.read' },
      schema: {
        tags,
        security,
        operationId: 'listIntegrations',
        summary: "This tenant's integrations.",
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: reply('IntegrationListReply', 'A page of integrations.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      const page = await listIntegrations(db, caller(request).tenantId, request.query);
      return okList(
        page.items.map((i) => integrationView(ctx.registry.get(i.connector), i)),
        page.nextCursor,
      );
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/integrations/:id',
    {
      config: { scope: 'integrations.write' },
      schema: {
        tags,
        security,
        operationId: 'deleteIntegration',
        summary: 'Delete an integration; with `If-Match`, only the version named.',
        params,
        headers: conditionalHeaders(false),
        response: {
          200: reply('DeletedIntegrationReply', 'Deleted.'),
          ...failures([...tenantFailures, 404, 409, 412], { ...noSuchIntegration, ...conditionalFailure }),
        },
      },
    },
    async (request) => {
      const { tenantId } = caller(request);
      const id = request.params.id;
      // The version read is the version deleted: a change landing in between is met on the next attempt.
      for (let attempt = 0; attempt < 5; attempt++) {
        const existing = await findIntegration(db, tenantId, id);
        if (!existing) throw notFound(id);
        checkPreconditions(request.headers, existing);
        const deleted = await inTransaction(db, async (tx) => {
          if (!(await deleteIntegration(tx, tenantId, id, existing.version))) return false;
          await recordChange(tx, tenantId, requestSource(request), {
            action: 'integration.deleted',
            target: { type: 'integration', id },
          });
          return true;
        });
        if (deleted) {
          ctx.integrations.forget(tenantId, id);
          await ctx.breakers.forget(integrationKey(tenantId, id));
          return ok({ id, deleted: true });
        }
      }
      throw changedByOthers(id);
    },
  );
}
