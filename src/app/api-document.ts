import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { refResolver, registerSharedSchemas } from '../routes/openapi.ts';

/** The OpenAPI document and its UI at /docs; registered before the routes, whose schemas it lists. */
export async function registerApiDocument(app: FastifyInstance, registry: ConnectorRegistry): Promise<void> {
  // The shapes the replies are serialized with and the document lists under components.schemas (src/routes/openapi.ts).
  registerSharedSchemas(app, registry);
  await app.register(swagger, {
    refResolver,
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Interchange', version: '1', description: 'Integration execution service, API v1 (docs/api.md).' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          TenantId: { type: 'apiKey', in: 'header', name: 'X-Tenant-ID' },
          Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
