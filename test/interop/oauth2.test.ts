import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Agent } from 'undici';
import { ApiError } from '../../src/core/errors.ts';
import {
  OAuth2ClientCredentials,
  type OAuth2ClientCredentialsOptions,
  type SendTokenRequest,
  withFreshTokenOnce,
} from '../../src/credentials/oauth2.ts';
import { createEgressDispatcher } from '../../src/egress/dispatcher.ts';
import { createEgressPolicy } from '../../src/egress/policy.ts';
import { sendUpstream } from '../../src/transport/upstream.ts';
import { type AuthorizationServer, issuedTokenSeconds, startAuthorizationServer } from '../support/oidc-authorization-server.ts';
import { closedPort, httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

// Characters RFC 6749 §2.3.1's form-encoding exists for: `:` would split a Basic pair, `+`, `%`, space and `&` change
// meaning in a form.
const basicClient = { clientId: 'basic client', clientSecret: 's3cret:+/ %&=', method: 'client_secret_basic' } as const;
const postClient = { clientId: 'post-client', clientSecret: 'p0st-s3cret&x=1', method: 'client_secret_post' } as const;

let dispatcher: Agent;
let server: AuthorizationServer;
const cleanups: Array<() => Promise<void>> = [];

before(async () => {
  dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true }));
  server = await startAuthorizationServer([basicClient, postClient]);
});
after(async () => {
  for (const cleanup of cleanups) await cleanup();
  await server.close();
  await dispatcher.close();
});

/** The token request as a connector sends it: through the egress dispatcher, with a timeout and a byte cap. */
function sendThrough(through: Agent = dispatcher): SendTokenRequest {
  return (request) => sendUpstream(through, { ...request, timeoutMs: 10_000, maxBodyBytes: 64 * 1024 });
}

function callUpstream(url: string) {
  return (authorization: string) =>
    sendUpstream(dispatcher, {
      url,
      method: 'POST',
      headers: { authorization },
      body: '{}',
      timeoutMs: 10_000,
      maxBodyBytes: 64 * 1024,
    });
}

async function upstream(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<RawUpstream> {
  const started = await httpUpstream(handle);
  cleanups.push(started.close);
  return started;
}

/** An upstream that accepts only access tokens the authorization server issued and still holds valid. */
function checkingUpstream(): Promise<RawUpstream> {
  return upstream((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    server.introspect(token).then((issued) => res.writeHead(issued ? 200 : 401).end(JSON.stringify(issued ?? {})));
  });
}

function source(client: typeof basicClient | typeof postClient, options: Partial<OAuth2ClientCredentialsOptions> = {}) {
  return new OAuth2ClientCredentials({
    tokenUrl: server.tokenUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    clientAuthentication: client.method,
    ...options,
  });
}

async function apiError(promise: Promise<unknown>, code: string): Promise<ApiError> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}, the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

/** Neither the secret nor any form of it a token request carries is in the error. */
function assertNoSecret(err: ApiError, secret: string): void {
  const shown = `${err.message} ${JSON.stringify(err.details ?? {})}`;
  for (const form of [secret, encodeURIComponent(secret), 's3cret', 'p0st']) assert.ok(!shown.includes(form), shown);
}

describe('OAuth2 client credentials against oidc-provider', () => {
  for (const client of [basicClient, postClient]) {
    test(`${client.method}: the token is accepted upstream and reused, N calls → 1 token request`, async () => {
      const before = server.tokenRequests.length;
      const api = await checkingUpstream();
      const oauth2 = source(client).boundTo(sendThrough());
      for (let i = 0; i < 5; i++) {
        const answer = await withFreshTokenOnce(oauth2, callUpstream(api.url));
        assert.equal(answer.status, 200);
        assert.equal(JSON.parse(answer.body.toString()).clientId, client.clientId);
      }
      assert.deepEqual(server.tokenRequests.slice(before), [client.method === 'client_secret_basic' ? 'basic' : 'post']);
      assert.equal(api.requests, 5);
    });
  }

  test('20 concurrent calls on a cold source → 1 token request, one token for all', async () => {
    const before = server.tokenRequests.length;
    const oauth2 = source(basicClient);
    const send = sendThrough();
    const values = await Promise.all(Array.from({ length: 20 }, () => oauth2.authorization(send)));
    assert.equal(server.tokenRequests.length - before, 1);
    assert.equal(new Set(values).size, 1);
    assert.match(values[0], /^Bearer [\x21-\x7e]+$/);
  });

  test('the scope is asked for: the issued token carries it', async () => {
    const oauth2 = source(postClient, { scope: 'read' });
    const token = (await oauth2.authorization(sendThrough())).slice('Bearer '.length);
    assert.deepEqual(await server.introspect(token), { clientId: postClient.clientId, scope: 'read' });
  });

  for (const client of [basicClient, postClient]) {
    test(`${client.method}: a wrong client secret → upstream_auth_failed, invalid_client, and no secret shown`, async () => {
      const wrong = `${client.clientSecret}-wrong`;
      const err = await apiError(source(client, { clientSecret: wrong }).authorization(sendThrough()), 'upstream_auth_failed');
      assert.equal(err.status, 502);
      assert.equal(err.details?.token_url, server.tokenUrl);
      assert.equal(err.details?.upstream_status, 401);
      assert.equal(err.details?.error, 'invalid_client');
      assert.equal(typeof err.details?.error_description, 'string');
      assertNoSecret(err, wrong);
    });
  }

  test('an upstream that refuses a token once → one fresh token request and one resend', async () => {
    const before = server.tokenRequests.length;
    const seen: string[] = [];
    const api = await upstream((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(seen.length === 1 ? 401 : 200).end('{}');
    });
    const oauth2 = source(basicClient).boundTo(sendThrough());
    const answer = await withFreshTokenOnce(oauth2, callUpstream(api.url));
    assert.equal(answer.status, 200);
    assert.equal(api.requests, 2);
    assert.equal(server.tokenRequests.length - before, 2);
    assert.notEqual(seen[0], seen[1], 'the resend carries the fresh token');
  });
});

describe('the 401 rule', () => {
  test('an upstream that always refuses → exactly 2 calls and 2 token requests, then its 401 comes back', async () => {
    const before = server.tokenRequests.length;
    const api = await upstream((_req, res) => res.writeHead(401).end('{"message":"no"}'));
    const answer = await withFreshTokenOnce(source(postClient).boundTo(sendThrough()), callUpstream(api.url));
    assert.equal(answer.status, 401);
    assert.equal(api.requests, 2);
    assert.equal(server.tokenRequests.length - before, 2);
  });

  test('20 concurrent calls all refused once → one refresh between them, 40 upstream calls', async () => {
    const before = server.tokenRequests.length;
    let firstToken: string | undefined;
    const api = await upstream((req, res) => {
      firstToken ??= req.headers.authorization;
      res.writeHead(req.headers.authorization === firstToken ? 401 : 200).end('{}');
    });
    const oauth2 = source(basicClient);
    await oauth2.authorization(sendThrough());
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => withFreshTokenOnce(oauth2.boundTo(sendThrough()), callUpstream(api.url))),
    );
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal(api.requests, 40);
    assert.equal(server.tokenRequests.length - before, 2);
  });

  test('a token endpoint that hands the refused token out again → no resend, the 401 comes back', async () => {
    const tokens = await upstream((_req, res) => res.end('{"access_token":"same","token_type":"Bearer","expires_in":3600}'));
    const api = await upstream((_req, res) => res.writeHead(401).end());
    const oauth2 = new OAuth2ClientCredentials({
      tokenUrl: `${tokens.url}/token`,
      clientId: 'c',
      clientSecret: 's',
      clientAuthentication: 'client_secret_basic',
    });
    const answer = await withFreshTokenOnce(oauth2.boundTo(sendThrough()), callUpstream(api.url));
    assert.equal(answer.status, 401);
    assert.equal(api.requests, 1);
    assert.equal(tokens.requests, 2);
  });

  test('a status other than 401 is returned as it is, without a new token', async () => {
    const calls: string[] = [];
    let fetched = 0;
    const fake = {
      authorization: async () => `Bearer t${++fetched}`,
      refused: () => assert.fail('refused after a 403'),
    };
    const answer = await withFreshTokenOnce(fake, async (authorization) => {
      calls.push(authorization);
      return { status: 403, note: 'kept' };
    });
    assert.deepEqual(answer, { status: 403, note: 'kept' });
    assert.deepEqual(calls, ['Bearer t1']);
  });
});

describe('the token request, the clock and misbehaving token endpoints', () => {
  /** A raw token endpoint answering `answers` in turn (the last one from then on), recording what it received. */
  async function tokenEndpoint(...answers: Array<{ status?: number; type?: string; body: string }>) {
    const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    const endpoint = await upstream((req, res, body) => {
      received.push({ headers: req.headers, body });
      const answer = answers[Math.min(received.length, answers.length) - 1];
      res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/json' }).end(answer.body);
    });
    return { url: `${endpoint.url}/oauth/token`, received, endpoint };
  }

  const token = (fields: Record<string, unknown>) => ({ body: JSON.stringify({ token_type: 'Bearer', ...fields }) });

  function rawSource(tokenUrl: string, options: Partial<OAuth2ClientCredentialsOptions> = {}) {
    return new OAuth2ClientCredentials({
      tokenUrl,
      clientId: 'id:1',
      clientSecret: 's3cret ü+',
      clientAuthentication: 'client_secret_basic',
      ...options,
    });
  }

  test('the form, its headers and client_secret_basic as RFC 6749 §2.3.1 encodes it', async () => {
    const raw = await tokenEndpoint(token({ access_token: 'a1', expires_in: 3600 }));
    await rawSource(raw.url, { scope: 'read write', audience: 'https://api.example/' }).authorization(sendThrough());
    const [{ headers, body }] = raw.received;
    assert.equal(headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(headers.accept, 'application/json');
    assert.equal(
      Buffer.from(headers.authorization?.slice('Basic '.length) ?? '', 'base64').toString(),
      'id%3A1:s3cret+%C3%BC%2B',
    );
    assert.deepEqual(Object.fromEntries(new URLSearchParams(body)), {
      grant_type: 'client_credentials',
      scope: 'read write',
      audience: 'https://api.example/',
    });
  });

  test('client_secret_post puts id and secret in the form, and sends no Authorization', async () => {
    const raw = await tokenEndpoint(token({ access_token: 'a1' }));
    await rawSource(raw.url, { clientAuthentication: 'client_secret_post' }).authorization(sendThrough());
    const [{ headers, body }] = raw.received;
    assert.equal(headers.authorization, undefined);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(body)), {
      grant_type: 'client_credentials',
      client_id: 'id:1',
      client_secret: 's3cret ü+',
    });
  });

  test('with an injected clock: reused until 60 s before expires_in, then fetched anew', async () => {
    let now = 1_000;
    const raw = await tokenEndpoint(token({ access_token: 'first', expires_in: 3600 }), token({ access_token: 'second' }));
    const oauth2 = rawSource(raw.url, { now: () => now });
    const send = sendThrough();
    assert.equal(await oauth2.authorization(send), 'Bearer first');
    now += 3_540_000 - 1;
    assert.equal(await oauth2.authorization(send), 'Bearer first');
    assert.equal(raw.received.length, 1);
    now += 1;
    assert.equal(await oauth2.authorization(send), 'Bearer second');
    assert.equal(raw.received.length, 2);
  });

  test('a token without expires_in lives 5 minutes; a numeric string expires_in counts', async () => {
    let now = 0;
    const raw = await tokenEndpoint(token({ access_token: 'first' }), token({ access_token: 'second', expires_in: '120' }));
    const oauth2 = rawSource(raw.url, { now: () => now });
    const send = sendThrough();
    await oauth2.authorization(send);
    now = 300_000 - 1;
    assert.equal(await oauth2.authorization(send), 'Bearer first');
    now = 300_000;
    assert.equal(await oauth2.authorization(send), 'Bearer second');
    now = 300_000 + 60_000 - 1;
    assert.equal(await oauth2.authorization(send), 'Bearer second');
    assert.equal(raw.received.length, 2);
  });

  test('never reused inside its last minute, whatever its lifetime: 63 s is reused 3 s; 60 s is fetched every call', async () => {
    let now = 0;
    const raw = await tokenEndpoint(
      token({ access_token: 'first', expires_in: 63 }),
      token({ access_token: 'second', expires_in: 63 }),
      token({ access_token: 'minute', expires_in: 60 }),
      token({ access_token: 'again', expires_in: 60 }),
    );
    const oauth2 = rawSource(raw.url, { now: () => now });
    const send = sendThrough();
    assert.equal(await oauth2.authorization(send), 'Bearer first');
    now = 2_999;
    assert.equal(await oauth2.authorization(send), 'Bearer first');
    // 4.5 s after it was fetched, inside its last 60 s: fetched anew (it was reused here before).
    now = 4_500;
    assert.equal(await oauth2.authorization(send), 'Bearer second');
    now = 4_500 + 3_000;
    assert.equal(await oauth2.authorization(send), 'Bearer minute');
    assert.equal(await oauth2.authorization(send), 'Bearer again', 'a 60 s token is not reused');
    assert.equal(raw.received.length, 4);
  });

  const refusals = [
    {
      name: '401 {"error":"invalid_client"}',
      answer: { status: 401, body: '{"error":"invalid_client"}' },
      error: 'invalid_client',
    },
    {
      name: '400 invalid_scope with a description',
      answer: { status: 400, body: '{"error":"invalid_scope","error_description":"scope x is unknown"}' },
      error: 'invalid_scope',
      description: 'scope x is unknown',
    },
    { name: '500 HTML', answer: { status: 500, type: 'text/html', body: '<html><body>oops</body></html>' } },
    { name: '200 with an error object', answer: { body: '{"error":"unauthorized_client"}' }, error: 'unauthorized_client' },
    { name: '200 malformed JSON', answer: { body: '{"access_token": "a1", ' }, message: /not a JSON object/ },
    { name: '200 a JSON array', answer: { body: '[]' }, message: /not a JSON object/ },
    { name: '200 without access_token', answer: token({ expires_in: 10 }), message: /no access_token/ },
    {
      name: '200 with an access_token holding a space',
      answer: token({ access_token: 'two words' }),
      message: /no access_token/,
    },
    { name: '200 token_type mac', answer: token({ access_token: 'a1', token_type: 'mac' }), message: /token_type/ },
    { name: '200 without token_type', answer: { body: '{"access_token":"a1"}' }, message: /token_type/ },
    { name: '200 expires_in "soon"', answer: token({ access_token: 'a1', expires_in: 'soon' }), message: /expires_in/ },
    { name: '200 expires_in -5', answer: token({ access_token: 'a1', expires_in: -5 }), message: /expires_in/ },
  ];
  for (const refusal of refusals) {
    test(`${refusal.name} → upstream_auth_failed with RFC 6749 §5.2's fields when there are some`, async () => {
      const raw = await tokenEndpoint(refusal.answer);
      const err = await apiError(rawSource(raw.url).authorization(sendThrough()), 'upstream_auth_failed');
      assert.equal(err.status, 502);
      assert.deepEqual(err.details, {
        token_url: raw.url,
        upstream_status: refusal.answer.status ?? 200,
        ...(refusal.error && { error: refusal.error }),
        ...(refusal.description && { error_description: refusal.description }),
      });
      if (refusal.message) assert.match(err.message, refusal.message);
      assert.ok(!err.message.includes('a1') && !err.message.includes('oops'), err.message);
      assertNoSecret(err, 's3cret ü+');
    });
  }

  test('a failure is not remembered: the next call asks again; concurrent callers share one failing request', async () => {
    const raw = await tokenEndpoint({ status: 503, body: 'busy' }, token({ access_token: 'a1' }));
    const oauth2 = rawSource(raw.url);
    const send = sendThrough();
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => oauth2.authorization(send)));
    assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set(['rejected']));
    assert.equal(raw.received.length, 1);
    assert.equal(await oauth2.authorization(send), 'Bearer a1');
    assert.equal(raw.received.length, 2);
  });

  test('a token endpoint nobody listens on keeps its transport code, says it was the token endpoint', async () => {
    const tokenUrl = `http://127.0.0.1:${await closedPort()}/token`;
    const err = await apiError(rawSource(tokenUrl).authorization(sendThrough()), 'upstream_unreachable');
    assert.match(err.message, /^Getting an OAuth2 access token failed: /);
    assert.deepEqual(err.details, { cause: 'refused', token_url: tokenUrl });
  });

  test('the token request obeys the egress policy of the dispatcher it is given', async () => {
    const raw = await tokenEndpoint(token({ access_token: 'a1' }));
    const strict = createEgressDispatcher(createEgressPolicy({ allowPrivate: false }));
    cleanups.push(() => strict.close());
    const err = await apiError(rawSource(raw.url).authorization(sendThrough(strict)), 'egress_denied');
    assert.equal(err.details?.token_url, raw.url);
    assert.equal(raw.received.length, 0);
  });

  test('user information in token_url is not shown', async () => {
    const raw = await tokenEndpoint({ status: 401, body: '{"error":"invalid_client"}' });
    const withUser = raw.url.replace('http://', 'http://user:pa55word@');
    const err = await apiError(rawSource(withUser).authorization(sendThrough()), 'upstream_auth_failed');
    assert.equal(err.details?.token_url, raw.url);
  });
});

describe('OAuth2ClientCredentials without a network', () => {
  const answer = (body: string) => ({ status: 200, headers: {}, body: Buffer.from(body) });

  test('a caller that joined a request bound to another execute whose budget ran out tries once with its own', async () => {
    const oauth2 = new OAuth2ClientCredentials({
      tokenUrl: 'https://auth.example/token',
      clientId: 'c',
      clientSecret: 's',
      clientAuthentication: 'client_secret_post',
    });
    let release: (() => void) | undefined;
    const outOfTime: SendTokenRequest = () =>
      new Promise((_resolve, reject) => {
        release = () =>
          reject(new ApiError('upstream_timeout', 'The execute did not finish.', { timeout_seconds: 1, scope: 'execute' }));
      });
    let own = 0;
    const withTime: SendTokenRequest = async () => {
      own++;
      return answer('{"access_token":"mine","token_type":"bearer"}');
    };
    const first = oauth2.authorization(outOfTime);
    const joined = oauth2.authorization(withTime);
    release?.();
    const err = await apiError(first, 'upstream_timeout');
    assert.equal(err.details?.scope, 'execute', 'the execute-wide failure is left as it is');
    assert.equal(await joined, 'Bearer mine');
    assert.equal(own, 1);
  });

  test('refused() forgets only the value refused: a late 401 for an old token does not throw away a new one', async () => {
    let issued = 0;
    const send: SendTokenRequest = async () => answer(`{"access_token":"t${++issued}","token_type":"Bearer"}`);
    const oauth2 = new OAuth2ClientCredentials({
      tokenUrl: 'https://auth.example/token',
      clientId: 'c',
      clientSecret: 's',
      clientAuthentication: 'client_secret_basic',
    });
    assert.equal(await oauth2.authorization(send), 'Bearer t1');
    oauth2.refused('Bearer t1');
    assert.equal(await oauth2.authorization(send), 'Bearer t2');
    oauth2.refused('Bearer t1');
    assert.equal(await oauth2.authorization(send), 'Bearer t2');
    assert.equal(issued, 2);
  });

  test('a token_url that is not http(s), or an unknown client_authentication, is refused when built', () => {
    const options = {
      tokenUrl: 'https://auth.example/token',
      clientId: 'c',
      clientSecret: 's',
      clientAuthentication: 'client_secret_basic',
    } as const;
    assert.throws(() => new OAuth2ClientCredentials({ ...options, tokenUrl: 'ftp://auth.example/token' }), {
      code: 'integration_misconfigured',
    });
    assert.throws(
      () => new OAuth2ClientCredentials({ ...options, clientAuthentication: 'private_key_jwt' as 'client_secret_post' }),
      { code: 'integration_misconfigured' },
    );
  });

  test('the token and the secret are not in what inspecting or serializing the source shows', async () => {
    const { inspect } = await import('node:util');
    const oauth2 = new OAuth2ClientCredentials({
      tokenUrl: 'https://auth.example/token',
      clientId: 'c',
      clientSecret: 'the-secret',
      clientAuthentication: 'client_secret_basic',
    });
    await oauth2.authorization(async () => answer('{"access_token":"the-token","token_type":"Bearer"}'));
    for (const shown of [inspect(oauth2, { depth: 5, showHidden: true }), JSON.stringify(oauth2), String(oauth2)]) {
      assert.ok(!shown.includes('the-token') && !shown.includes('the-secret'), shown);
    }
  });
});

test('issuedTokenSeconds is what the authorization server says in expires_in', async () => {
  let seen: unknown;
  const oauth2 = source(basicClient);
  await oauth2.authorization(async (request) => {
    const answer = await sendThrough()(request);
    seen = JSON.parse(answer.body.toString()).expires_in;
    return answer;
  });
  assert.equal(seen, issuedTokenSeconds);
});
