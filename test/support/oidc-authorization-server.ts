import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A client the authorization server knows, with how it authenticates at the token endpoint. */
export interface TestClient {
  clientId: string;
  clientSecret: string;
  method: 'client_secret_basic' | 'client_secret_post';
}

/** oidc-provider on 127.0.0.1, issuing access tokens for the client credentials grant, counting token requests. */
export interface AuthorizationServer {
  tokenUrl: string;
  /** Token requests received, and how each authenticated (`basic` when it carried an Authorization header). */
  tokenRequests: Array<'basic' | 'post'>;
  /** The issued token's client and scope, or undefined when the server never issued it or it has expired. */
  introspect(accessToken: string): Promise<{ clientId: string; scope: string | undefined } | undefined>;
  close(): Promise<void>;
}

/**
 * The provider's storage, one Map per server: like its own development adapter, but given explicitly so that it does
 * not warn on every run. Expiry is checked by the provider itself when it reads a token back.
 */
function memoryAdapter() {
  const stored = new Map<string, Record<string, unknown>>();
  return class MemoryAdapter {
    readonly #name: string;
    constructor(name: string) {
      this.#name = name;
    }
    async upsert(id: string, payload: Record<string, unknown>): Promise<void> {
      stored.set(`${this.#name}:${id}`, payload);
    }
    async find(id: string): Promise<Record<string, unknown> | undefined> {
      return stored.get(`${this.#name}:${id}`);
    }
    async findByUid(): Promise<undefined> {
      return undefined;
    }
    async findByUserCode(): Promise<undefined> {
      return undefined;
    }
    async consume(id: string): Promise<void> {
      const payload = stored.get(`${this.#name}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> {
      stored.delete(`${this.#name}:${id}`);
    }
    async revokeByGrantId(): Promise<void> {}
  };
}

/** Seconds the server's client credentials tokens live (its `expires_in`). */
export const issuedTokenSeconds = 600;

/**
 * An OpenID provider we did not write, as the upstream's authorization server. It issues opaque access tokens
 * (no resource indicator is asked for), which the test upstreams check through `introspect`.
 */
export async function startAuthorizationServer(clients: TestClient[]): Promise<AuthorizationServer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Its own signing key, so the provider does not fall back to its development keys.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'test' }] },
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    scopes: ['read', 'write'],
    ttl: { ClientCredentials: issuedTokenSeconds },
    clients: clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      token_endpoint_auth_method: client.method,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'read write',
    })),
  });
  const tokenRequests: Array<'basic' | 'post'> = [];
  provider.use(async (ctx, next) => {
    if (ctx.path === '/token' && ctx.method === 'POST') tokenRequests.push(ctx.get('authorization') ? 'basic' : 'post');
    await next();
  });
  server.on('request', provider.callback());
  return {
    tokenUrl: `${issuer}/token`,
    tokenRequests,
    async introspect(accessToken) {
      const token = await provider.ClientCredentials.find(accessToken);
      return token && { clientId: token.clientId, scope: token.scope };
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
