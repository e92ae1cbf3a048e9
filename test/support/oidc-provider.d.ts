/** The little of oidc-provider (an untyped JavaScript package) that the OAuth2 tests use. */
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  interface ProviderContext {
    path: string;
    method: string;
    get(header: string): string;
  }

  interface IssuedClientCredentials {
    clientId: string;
    scope?: string;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): RequestListener;
    ClientCredentials: { find(token: string): Promise<IssuedClientCredentials | undefined> };
  }
}
