import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { toKeyObject } from '../../src/auth/key-object.ts';
import { defineConnector } from '../../src/connectors/connector.ts';
import { integrationView } from '../../src/connectors/integration-config.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { findKey } from '../../src/storage/api-keys.ts';
import { findExecution } from '../../src/storage/executions.ts';
import { findIntegration, saveIntegration } from '../../src/storage/integrations.ts';
import { body, type Harness, harness } from '../support/harness.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A connector of this file only: the document must describe whatever connectors the app was built with. */
const noteSchema = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: { text: { type: 'string', maxLength: 200 } },
} as const;

const notesConnector = defineConnector<typeof noteSchema, typeof noteSchema>({
  id: 'notes-0.1.0',
  configProperties: { folder: { type: ['string', 'null'], maxLength: 100 }, api_key: { type: ['string', 'null'] } },
  secretFields: ['api_key'],
  urlFields: [],
  defaults: { timeout_seconds: 30, folder: 'inbox' },
  offers: ['send', 'test'],
  requestSchemas: { send: noteSchema, receive: noteSchema },
  connect(integration) {
    return {
      async send(fields) {
        // Connector-defined data, nested and with nulls: a reply must carry all of it.
        const data = { saved: fields.text, folder: integration.config.folder, nested: { deep: [1, { two: null }], empty: {} } };
        return { data, messageCount: 1 };
      },
      async receive() {
        return { data: {}, messageCount: 0 };
      },
      async test() {
        return { data: { message: 'notes are there', details: { folder: integration.config.folder } }, messageCount: 0 };
      },
    };
  },
});

/** Every operation of the API, as `METHOD path`: each must be in the document. */
const operations = [
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'POST /api/v1/api-keys',
  'GET /api/v1/api-keys',
  'GET /api/v1/api-keys/{key_id}',
  'GET /api/v1/api-keys/{key_id}/usage',
  'POST /api/v1/api-keys/{key_id}/rotate',
  'DELETE /api/v1/api-keys/{key_id}',
  'GET /api/v1/me',
  'GET /api/v1/members',
  'POST /api/v1/members',
  'PATCH /api/v1/members/{user_id}',
  'DELETE /api/v1/members/{user_id}',
  'GET /api/v1/entities',
  'POST /api/v1/entities',
  'POST /api/v1/executions/{id}/cancel',
  'GET /api/v1/entities/{id}',
  'PATCH /api/v1/entities/{id}',
  'DELETE /api/v1/entities/{id}',
  'PUT /api/v1/integrations/{id}',
  'PATCH /api/v1/integrations/{id}',
  'GET /api/v1/integrations/{id}',
  'GET /api/v1/integrations/{id}/schema',
  'GET /api/v1/integrations/{id}/operations',
  'POST /api/v1/mcp',
  'GET /api/v1/integrations',
  'DELETE /api/v1/integrations/{id}',
  'POST /api/v1/integrations/{id}/execute',
  'GET /api/v1/executions',
  'GET /api/v1/executions/{id}',
  'POST /api/v1/auth/sign-in',
  'POST /api/v1/auth/refresh',
  'POST /api/v1/auth/sign-out',
  'GET /.well-known/jwks.json',
  'POST /api/v1/webhooks',
  'GET /api/v1/webhooks',
  'GET /api/v1/webhooks/{id}',
  'PATCH /api/v1/webhooks/{id}',
  'DELETE /api/v1/webhooks/{id}',
  'POST /api/v1/webhooks/{id}/rotate-secret',
  'GET /api/v1/webhooks/{id}/deliveries',
  'GET /api/v1/webhooks/{id}/deliveries/{delivery_id}',
  'POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/resend',
  'POST /api/v1/webhooks/{id}/test',
  'GET /api/v1/audit-events',
];

// biome-ignore lint/suspicious/noExplicitAny: the document is read by shape.
type Json = any;

const errorRef = '#/components/schemas/Error';

describe('the OpenAPI document', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  let doc: Json;
  let ajv: Ajv2020;

  /** A schema of the document with its `$ref`s followed (one level: components refer to components by name). */
  const resolve = (schema: Json): Json => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);

  /** Asserts that a reply fits what the document says of that operation and status. */
  function assertDocumented(res: LightMyRequestResponse, method: string, path: string): Json {
    const response = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.statusCode)];
    assert.ok(response, `${method} ${path} does not document ${res.statusCode}`);
    const schema = response.content['application/json'].schema;
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
    const parsed = body(res);
    assert.ok(validate(parsed), `${method} ${path} ${res.statusCode}: ${JSON.stringify(validate.errors)}\n${res.body}`);
    return parsed;
  }

  before(async () => {
    h = await harness({}, { connectors: (config) => [...builtInConnectors(config), notesConnector] });
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['*'])).key, tenant: 'acme' };
    const res = await h.call(null, { method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = body(res);
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
  });
  after(() => h.close());

  test('is a valid OpenAPI 3.1 document, its schemas valid JSON Schema 2020-12', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
    // The OpenAPI schema takes any object as a Schema Object: check each against the JSON Schema dialect itself.
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      assert.ok(ajv.validateSchema(schema as object), `${name}: ${JSON.stringify(ajv.errors)}`);
    }
  });

  test('every operation has a unique operationId, a 2xx reply with its schema and its failures in the Error shape', () => {
    const listed = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(listed.toSorted(), operations.toSorted());
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item as Record<string, Json>)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where}: operationId`);
        assert.ok(!ids.has(operation.operationId), `${where}: operationId ${operation.operationId} is used twice`);
        ids.add(operation.operationId);
        assert.ok(operation.summary, `${where}: summary`);
        const statuses = Object.keys(operation.responses);
        const successes = statuses.filter((s) => /^2\d\d$/.test(s));
        assert.ok(successes.length > 0, `${where}: no 2xx reply`);
        for (const status of successes) {
          const content = operation.responses[status].content ?? {};
          assert.ok(
            Object.values(content).some((media: Json) => media.schema),
            `${where} ${status}: no schema`,
          );
        }
        for (const status of statuses.filter((s) => /^[45]\d\d$/.test(s))) {
          const schema = operation.responses[status].content?.['application/json']?.schema;
          const refs = schema?.$ref ? [schema.$ref] : (schema?.oneOf ?? []).map((s: Json) => s.$ref);
          assert.ok(refs.includes(errorRef), `${where} ${status}: not the Error shape`);
          assert.ok(operation.responses[status].description, `${where} ${status}: description`);
        }
        assert.ok(statuses.includes('500') && statuses.includes('503'), `${where}: 500 and 503`);
        if (operation.security) {
          for (const status of ['400', '401', '429']) assert.ok(statuses.includes(status), `${where}: ${status}`);
        }
        if (operation.requestBody) {
          assert.ok(statuses.includes('413') && statuses.includes('415'), `${where}: 413 and 415`);
          const media = operation.requestBody.content['application/json'];
          assert.ok(media.example || media.examples || resolve(media.schema).examples, `${where}: a request example`);
        }
      }
    }
    assert.ok(ids.has('executeIntegration') && ids.has('createApiKey') && ids.has('listEntities'));
  });

  test('the Error shape lists the whole catalogue of codes', async () => {
    const { errorCatalogue } = await import('../../src/core/errors.ts');
    assert.deepEqual(doc.components.schemas.Error.properties.error.properties.code.enum, Object.keys(errorCatalogue));
  });

  test('PUT /integrations documents 201 (created) and 200 (replaced), and a config per connector', () => {
    const put = doc.paths['/api/v1/integrations/{id}'].put;
    for (const status of ['200', '201']) {
      assert.equal(put.responses[status].content['application/json'].schema.$ref, '#/components/schemas/IntegrationReply');
    }
    const schema = put.requestBody.content['application/json'].schema;
    assert.equal(schema.discriminator.propertyName, 'connector');
    for (const id of ['graphql-1.0.0', 'soap-1.0.0', 'notes-0.1.0']) {
      const branch = resolve({ $ref: schema.discriminator.mapping[id] });
      assert.deepEqual(branch.properties.connector.enum, [id]);
      const config = resolve(branch.properties.config);
      const connector = id === 'notes-0.1.0' ? notesConnector : builtInConnectors(h.config).find((c) => c.id === id)!;
      assert.deepEqual(Object.keys(config.properties), Object.keys(connector.configProperties), `${id}: config fields`);
      // Top-level secrets are write-only fields; those inside `auth` are told in its description.
      for (const secret of connector.secretFields.filter((field) => !field.includes('.'))) {
        assert.equal(config.properties[secret].writeOnly, true, `${id}.${secret}`);
      }
    }
    assert.equal(schema.oneOf.length, 3);
  });

  test('the execute body is a oneOf discriminated by operation, per connector and operation', () => {
    const media = doc.paths['/api/v1/integrations/{id}/execute'].post.requestBody.content['application/json'];
    const schema = media.schema;
    assert.equal(schema.discriminator.propertyName, 'operation');
    assert.deepEqual(Object.keys(schema.discriminator.mapping).toSorted(), ['batch', 'receive', 'send', 'sync', 'test']);
    assert.deepEqual(
      schema.oneOf.map((s: Json) => s.$ref),
      Object.values(schema.discriminator.mapping),
    );
    for (const [operation, target] of Object.entries(schema.discriminator.mapping)) {
      assert.deepEqual(resolve({ $ref: target }).properties.operation.enum, [operation]);
    }
    // Everything the body's schema reaches, refs followed: every connector is named, with its own fields.
    const reached = new Set<string>();
    const walk = (node: Json): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string' && !reached.has(node.$ref)) {
          reached.add(node.$ref);
          walk(resolve(node));
        }
        Object.values(node).forEach(walk);
      }
    };
    walk(schema);
    const text = [...reached].join(' ');
    for (const id of ['graphql-1.0.0', 'soap-1.0.0', 'notes-0.1.0']) assert.ok(text.includes(id), `${id} is not described`);
    // notes offers send and test only: it is in send, not in receive or sync.
    const send = resolve({ $ref: schema.discriminator.mapping.send });
    assert.ok(send.anyOf.some((s: Json) => s.$ref.endsWith('ExecuteSend.notes-0.1.0')));
    const receive = resolve({ $ref: schema.discriminator.mapping.receive });
    assert.ok(!receive.anyOf.some((s: Json) => s.$ref.includes('notes')));
    const notesSend = resolve({ $ref: '#/components/schemas/ExecuteSend.notes-0.1.0' });
    assert.deepEqual(notesSend.required, ['operation', 'text']);
    assert.equal(notesSend.additionalProperties, false);
    const graphqlReceive = resolve({ $ref: '#/components/schemas/ExecuteReceive.graphql-1.0.0' });
    assert.ok(graphqlReceive.required.includes('query') && 'paginate' in graphqlReceive.properties);
    const soapSend = resolve({ $ref: '#/components/schemas/ExecuteSend.soap-1.0.0' });
    assert.ok(soapSend.required.includes('method'));
    // Each documented example fits the documented body.
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
    for (const [name, example] of Object.entries(media.examples as Record<string, { value: unknown }>)) {
      assert.ok(validate(example.value), `example ${name}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('free objects say they take any keys, and the document names its server', () => {
    // A generated client (openapi-typescript's defaults) types an object without `additionalProperties` as one that
    // takes no keys: `params: {a: 40, b: 2}` would not compile. test/interop/openapi-client.test.ts compiles such a client.
    const schemas = doc.components.schemas;
    for (const operation of ['Send', 'Receive']) {
      const soap = schemas[`Execute${operation}.soap-1.0.0`].properties;
      assert.equal(soap.params.additionalProperties, true, `${operation} params`);
      assert.equal(soap.soap_headers.additionalProperties, true, `${operation} soap_headers`);
      assert.equal(schemas[`Execute${operation}.graphql-1.0.0`].properties.variables.additionalProperties, true);
    }
    // And every other free object of the document, wherever it is.
    const free: string[] = [];
    const walk = (node: Json, path: string): void => {
      if (!node || typeof node !== 'object') return;
      const shaped = node.properties ?? node.patternProperties ?? node.additionalProperties;
      if ([node.type].flat().includes('object') && shaped === undefined) free.push(path);
      for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`);
    };
    walk(doc, '#');
    assert.deepEqual(free, []);
    // Relative: resolved against wherever the document was fetched from (src/routes/health.ts).
    assert.deepEqual(
      doc.servers.map((server: Json) => server.url),
      ['/'],
    );
  });

  test('the document does not change what the execute route accepts: its fields are checked per connector at run time', async () => {
    await h.call(auth, { method: 'PUT', url: '/api/v1/integrations/gql', payload: { connector: 'graphql-1.0.0' } });
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/gql/execute',
      payload: { operation: 'send', method: 'Add' },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      body(res)
        .error.details.issues.map((i: Json) => i.path)
        .toSorted(),
      ['method', 'mutation'],
    );
  });

  test('the replies fit the document and keep every field', async () => {
    const db = h.storage.db;
    let res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'doc', scopes: ['entities.read'] },
    });
    const created = assertDocumented(res, 'POST', '/api/v1/api-keys').data;
    assert.equal(res.statusCode, 201);
    const { key: secret, ...shown } = created;
    assert.match(secret, /^ix_live_/);
    assert.deepEqual(shown, toKeyObject((await findKey(db, created.id))!));
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/api-keys?limit=1' }), 'GET', '/api/v1/api-keys');
    assertDocumented(
      await h.call(auth, { method: 'GET', url: `/api/v1/api-keys/${created.id}/usage?days=2` }),
      'GET',
      '/api/v1/api-keys/{key_id}/usage',
    );
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/me' }), 'GET', '/api/v1/me');
    res = await h.call(auth, { method: 'POST', url: `/api/v1/api-keys/${created.id}/rotate`, payload: { overlap_seconds: 0 } });
    assert.equal(assertDocumented(res, 'POST', '/api/v1/api-keys/{key_id}/rotate').data.name, 'doc');
    res = await h.call(auth, { method: 'DELETE', url: `/api/v1/api-keys/${created.id}` });
    assert.equal(res.statusCode, 200);
    assert.ok(assertDocumented(res, 'DELETE', '/api/v1/api-keys/{key_id}').data.revoked_at);
    res = await h.call(auth, { method: 'POST', url: `/api/v1/api-keys/${created.id}/rotate`, payload: {} });
    assert.equal(assertDocumented(res, 'POST', '/api/v1/api-keys/{key_id}/rotate').error.code, 'conflict');

    res = await h.call(auth, { method: 'POST', url: '/api/v1/entities', payload: { entity_id: 'e1', name: 'One' } });
    assert.deepEqual(assertDocumented(res, 'POST', '/api/v1/entities').data, { entity_id: 'e1', name: 'One', status: 'active' });
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/entities?id=e1' }), 'GET', '/api/v1/entities');
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/entities' }), 'GET', '/api/v1/entities');
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/entities?id=none' }), 'GET', '/api/v1/entities');
    assertDocumented(await h.call(auth, { method: 'GET', url: '/api/v1/entities?limit=0' }), 'GET', '/api/v1/entities');
    assertDocumented(await h.call(auth, { method: 'DELETE', url: '/api/v1/entities/e1' }), 'DELETE', '/api/v1/entities/{id}');
    assertDocumented(await h.call(null, { method: 'GET', url: '/api/v1/entities' }), 'GET', '/api/v1/entities');

    // Integrations of every connector, and one whose connector this app does not offer.
    const integration = '/api/v1/integrations/{id}';
    res = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/calc',
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: 'https://soap.example.com/calc.asmx', auth_value: 's3cret' } },
    });
    assert.equal(res.statusCode, 201);
    assertDocumented(res, 'PUT', integration);
    res = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/calc',
      payload: { connector: 'graphql-1.0.0', config: { base_url: 'https://graphql.example.com', token: 't' } },
    });
    assert.equal(res.statusCode, 200);
    const replaced = assertDocumented(res, 'PUT', integration).data;
    const definitions = [...builtInConnectors(h.config), notesConnector];
    const stored = (await findIntegration(db, 'acme', 'calc'))!;
    assert.deepEqual(replaced, integrationView(definitions[0], stored));
    assert.deepEqual(Object.keys(replaced), ['id', 'name', 'connector', 'config', 'catalog', 'created_at', 'updated_at']);
    res = await h.call(auth, { method: 'PUT', url: '/api/v1/integrations/notes', payload: { connector: 'notes-0.1.0' } });
    assert.deepEqual(assertDocumented(res, 'PUT', integration).data.config, { folder: 'inbox', api_key_set: false });
    res = await h.call(auth, { method: 'PATCH', url: '/api/v1/integrations/notes', payload: { config: { folder: 'x' } } });
    assert.equal(assertDocumented(res, 'PATCH', integration).data.config.folder, 'x');
    res = await h.call(auth, { method: 'PATCH', url: '/api/v1/integrations/notes', payload: { config: { folder: 1 } } });
    assert.deepEqual(assertDocumented(res, 'PATCH', integration).error.details.issues[0].path, 'config.folder');
    await saveIntegration(
      db,
      'acme',
      'retired',
      {
        name: 'Retired',
        connector: 'gone-1.0.0',
        config: { endpoint: 'https://old.example.com', depth: { a: [1] } },
        secrets: {},
      },
      undefined,
    );
    res = await h.call(auth, { method: 'GET', url: '/api/v1/integrations/retired' });
    assert.deepEqual(assertDocumented(res, 'GET', integration).data.config, {
      endpoint: 'https://old.example.com',
      depth: { a: [1] },
    });
    res = await h.call(auth, { method: 'GET', url: '/api/v1/integrations' });
    assert.equal(assertDocumented(res, 'GET', '/api/v1/integrations').data.length, 4);
    assertDocumented(await h.call(auth, { method: 'DELETE', url: '/api/v1/integrations/retired' }), 'DELETE', integration);

    // Execute: the connector's data whole, a replayed answer (serialized from what was kept) the same, failures too.
    const execute = '/api/v1/integrations/{id}/execute';
    const send = {
      method: 'POST',
      url: '/api/v1/integrations/notes/execute',
      payload: { operation: 'send', text: 'hi' },
    } as const;
    const first = await h.call(auth, { ...send, headers: { 'idempotency-key': 'k1' } });
    assert.deepEqual(assertDocumented(first, 'POST', execute).data, {
      saved: 'hi',
      folder: 'x',
      nested: { deep: [1, { two: null }], empty: {} },
    });
    const replay = await h.call(auth, { ...send, headers: { 'idempotency-key': 'k1' } });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    res = await h.call(auth, { method: 'POST', url: '/api/v1/integrations/notes/execute', payload: { operation: 'receive' } });
    assert.equal(assertDocumented(res, 'POST', execute).error.code, 'unsupported_operation');
    res = await h.call(auth, { method: 'POST', url: '/api/v1/integrations/gql/execute', payload: { operation: 'test' } });
    assert.equal(assertDocumented(res, 'POST', execute).error.code, 'integration_misconfigured');

    await h.app.executionLog.flush();
    res = await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=5' });
    const executions = assertDocumented(res, 'GET', '/api/v1/executions').data;
    assert.ok(executions.length >= 2);
    res = await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executions[0].id}` });
    const one = assertDocumented(res, 'GET', '/api/v1/executions/{id}').data;
    assert.deepEqual(one, await findExecution(db, 'acme', one.id));

    // A webhook's attempt (to a port nothing listens on: it fails at once), its detail and a resend.
    res = await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload: { url: 'http://127.0.0.1:9/', events: ['*'] } });
    const hook = assertDocumented(res, 'POST', '/api/v1/webhooks').data;
    res = await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/test` });
    const attempt = assertDocumented(res, 'POST', '/api/v1/webhooks/{id}/test').data.delivery;
    const delivery = '/api/v1/webhooks/{id}/deliveries/{delivery_id}';
    res = await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/${attempt.id}` });
    assert.equal(assertDocumented(res, 'GET', delivery).data.payload.type, 'webhook.test');
    res = await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/dlv_none` });
    assert.equal(assertDocumented(res, 'GET', delivery).error.code, 'not_found');
    res = await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/deliveries/${attempt.id}/resend` });
    assert.equal(res.statusCode, 202);
    assert.equal(assertDocumented(res, 'POST', `${delivery}/resend`).data.event_id, attempt.event_id);
    await h.call(auth, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}` });

    assertDocumented(await h.call(null, { method: 'GET', url: '/healthz' }), 'GET', '/healthz');
    assertDocumented(await h.call(null, { method: 'GET', url: '/readyz' }), 'GET', '/readyz');
  });
});
