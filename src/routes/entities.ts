import type { FastifyInstance } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { ok, okList } from '../http/envelope.ts';
import {
  deleteEntity,
  type EntityStatus,
  entityStatuses,
  findEntity,
  insertEntity,
  listEntities,
  updateEntity,
} from '../storage/entities.ts';
import { bodyFailures, failures, idParams, objectId, pageQuery, ref, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Entities'];
const name = { type: 'string', minLength: 1, maxLength: 256 } as const;
const status = { type: 'string', enum: entityStatuses } as const;
const entityParams = idParams('id');

const noSuchEntity = { 404: 'No such entity in this tenant.' } as const;

function notFound(id: string): ApiError {
  return new ApiError('not_found', `No entity ${id}.`);
}

export function registerEntityRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.storage.db;

  app.get<{ Querystring: { id?: string; status?: EntityStatus; limit: number; cursor?: string } }>(
    '/api/v1/entities',
    {
      config: { scope: 'entities.read' },
      schema: {
        tags,
        security,
        operationId: 'listEntities',
        summary: 'With ?id=, one entity as an object; without it, the list.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { id: objectId, status, ...pageQuery },
        },
        response: {
          200: {
            description: 'With `id`, that entity; without it, a page of entities.',
            oneOf: [ref('EntityReply'), ref('EntityListReply')],
          },
          ...failures([...tenantFailures, 404], { 404: 'With `id`: no such entity in this tenant.' }),
        },
      },
    },
    async (request) => {
      const { tenantId } = caller(request);
      const { id, ...filters } = request.query;
      if (id !== undefined) {
        const entity = await findEntity(db, tenantId, id);
        if (!entity) throw notFound(id);
        return ok(entity);
      }
      const page = await listEntities(db, tenantId, filters);
      return okList(page.items, page.nextCursor);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/entities/:id',
    {
      config: { scope: 'entities.read' },
      schema: {
        tags,
        security,
        operationId: 'getEntity',
        summary: 'One entity.',
        params: entityParams,
        response: { 200: reply('EntityReply', 'The entity.'), ...failures([...tenantFailures, 404], noSuchEntity) },
      },
    },
    async (request) => {
      const entity = await findEntity(db, caller(request).tenantId, request.params.id);
      if (!entity) throw notFound(request.params.id);
      return ok(entity);
    },
  );

  app.post<{ Body: { entity_id?: string; name: string; status?: EntityStatus } }>(
    '/api/v1/entities',
    {
      config: { scope: 'entities.write' },
      schema: {
        tags,
        security,
        operationId: 'createEntity',
        summary: 'Create an entity; entity_id is generated when left out.',
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { entity_id: objectId, name, status },
          examples: [{ entity_id: 'cust-1', name: 'First customer' }],
        },
        response: {
          201: reply('EntityReply', 'The created entity.'),
          ...failures([...tenantFailures, ...bodyFailures, 409], { 409: '`conflict`: an entity with this entity_id exists.' }),
        },
      },
    },
    async (request, reply) => {
      const { entity_id = newId('ent'), name, status = 'active' } = request.body;
      const created = await insertEntity(db, caller(request).tenantId, { entity_id, name, status });
      if (!created) throw new ApiError('conflict', `Entity ${entity_id} exists already.`);
      return reply.code(201).send(ok(created));
    },
  );

  app.patch<{ Params: { id: string }; Body: { name?: string; status?: EntityStatus } }>(
    '/api/v1/entities/:id',
    {
      config: { scope: 'entities.write' },
      schema: {
        tags,
        security,
        operationId: 'updateEntity',
        summary: 'Change name and/or status.',
        params: entityParams,
        body: {
          type: 'object',
          minProperties: 1,
          additionalProperties: false,
          properties: { name, status },
          examples: [{ status: 'archived' }],
        },
        response: {
          200: reply('EntityReply', 'The entity as changed.'),
          ...failures([...tenantFailures, ...bodyFailures, 404], noSuchEntity),
        },
      },
    },
    async (request) => {
      const updated = await updateEntity(db, caller(request).tenantId, request.params.id, request.body);
      if (!updated) throw notFound(request.params.id);
      return ok(updated);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/entities/:id',
    {
      config: { scope: 'entities.write' },
      schema: {
        tags,
        security,
        operationId: 'deleteEntity',
        summary: 'Delete an entity.',
        params: entityParams,
        response: { 200: reply('DeletedEntityReply', 'Deleted.'), ...failures([...tenantFailures, 404], noSuchEntity) },
      },
    },
    async (request) => {
      if (!(await deleteEntity(db, caller(request).tenantId, request.params.id))) throw notFound(request.params.id);
      return ok({ entity_id: request.params.id, deleted: true });
    },
  );
}
