/**
 * The console's only way to the API. The access token lives in this module's memory and nowhere else; the refresh
 * token is the HttpOnly cookie the service sets on /api/v1/auth, which this code never sees. A call answered 401
 * refreshes once (one refresh shared by every call waiting on it) and is retried once.
 */

let accessToken = null;
let session = null;
let refreshing = null;
let renewTimer = null;
const listeners = new Set();

/**
 * A hint, not a credential: "this browser signed in here". The refresh cookie is HttpOnly, so the page cannot tell
 * whether it has one; without the hint a first visit would begin with a refresh answered 401.
 */
const hintCookie = 'ix_console_session';
const hintMaxAgeSeconds = 14 * 86_400;

function setHint(on) {
  // biome-ignore lint/suspicious/noDocumentCookie: a one-line write; the Cookie Store API is not in every browser yet.
  document.cookie = `${hintCookie}=${on ? '1' : ''}; Path=/console; Max-Age=${on ? hintMaxAgeSeconds : 0}; SameSite=Strict`;
}

function hasHint() {
  return document.cookie.split(';').some((c) => c.trim() === `${hintCookie}=1`);
}

/** A non-2xx answer in the API's error shape. */
export class ApiFailure extends Error {
  constructor(result) {
    const error = result.body?.error ?? {};
    super(error.message ?? `The request failed with HTTP ${result.status}.`);
    this.status = result.status;
    this.code = error.code ?? 'http_error';
    this.details = error.details ?? null;
    this.requestId = result.body?.request_id ?? result.headers.get('x-request-id');
  }
}

/** The signed-in person: `{user, memberships}`, or null. */
export function currentSession() {
  return session;
}

/** Calls `listener(session)` whenever someone signs in or out (or a refresh fails). Returns the unsubscribe. */
export function onSessionChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setSession(data) {
  accessToken = data?.access_token ?? null;
  session = data ? { user: data.user, memberships: data.memberships ?? [] } : null;
  setHint(Boolean(data));
  // Renewed a minute before it expires, so calls seldom meet an expired token (a 401 still refreshes once).
  clearTimeout(renewTimer);
  if (data?.expires_in) renewTimer = setTimeout(refresh, Math.max(5, data.expires_in - 60) * 1000);
  for (const listener of listeners) listener(session);
}

async function send(path, { method = 'GET', body, tenant, headers = {} } = {}) {
  const init = { method, headers: { accept: 'application/json', ...headers }, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (accessToken) init.headers.authorization = `Bearer ${accessToken}`;
  if (tenant) init.headers['x-tenant-id'] = tenant;
  const started = performance.now();
  const response = await fetch(`/api/v1${path}`, init);
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return {
    status: response.status,
    ok: response.ok,
    headers: response.headers,
    body: parsed,
    text,
    ms: Math.round(performance.now() - started),
  };
}

/** Trades the refresh cookie for a new access token. True when a session is back. */
export function refresh() {
  refreshing ??= send('/auth/refresh', { method: 'POST', body: {} })
    .then((result) => {
      setSession(result.ok ? result.body?.data : null);
      return result.ok;
    })
    .catch(() => {
      setSession(null);
      return false;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** On page load: the session back from the refresh cookie, if this browser signed in. */
export function restoreSession() {
  return hasHint() ? refresh() : Promise.resolve(false);
}

/** Any API call, whatever its answer (the try-it-out panel shows failures as they are). */
export async function request(path, options = {}) {
  const first = await send(path, options);
  if (first.status !== 401 || path.startsWith('/auth/')) return first;
  if (!(await refresh())) return first;
  return send(path, options);
}

/** An API call that must succeed: resolves to the whole body (`{success, data, pagination?}`), else throws ApiFailure. */
export async function api(path, options) {
  const result = await request(path, options);
  if (!result.ok) throw new ApiFailure(result);
  return result.body;
}

/** Every item of a list endpoint (`/integrations`), page after page of 100, up to `max`. */
export async function apiAll(path, { tenant, max = 1000 }) {
  const all = [];
  let cursor = null;
  do {
    const page = await api(`${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { tenant });
    all.push(...page.data);
    cursor = page.pagination?.next_cursor ?? null;
  } while (cursor && all.length < max);
  return all;
}

/**
 * `api`, and the answer's `ETag`: `{body, etag}`. A form that writes back what it read sends the ETag as `If-Match`, so
 * a change someone made in between is refused (412) instead of overwritten.
 */
export async function apiVersioned(path, options) {
  const result = await request(path, options);
  if (!result.ok) throw new ApiFailure(result);
  return { body: result.body, etag: result.headers.get('etag') };
}

export async function signIn(email, password) {
  const result = await send('/auth/sign-in', { method: 'POST', body: { email, password } });
  if (!result.ok) throw new ApiFailure(result);
  setSession(result.body.data);
  return session;
}

export async function signOut() {
  try {
    await send('/auth/sign-out', { method: 'POST', body: {} });
  } finally {
    setSession(null);
  }
}
