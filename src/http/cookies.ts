import type { FastifyRequest } from 'fastify';

/** The value of cookie `name` in the request's Cookie header, or undefined. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True when the request was addressed to a loopback host (its Host header), where a cookie may go without `Secure`. */
export function addressedToLoopback(request: FastifyRequest): boolean {
  return loopbackHosts.has(request.hostname.toLowerCase());
}

export interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** A `Set-Cookie` value for a cookie scripts cannot read and other sites never send: HttpOnly, SameSite=Strict. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Max-Age=${options.maxAgeSeconds}`, `Path=${options.path}`, 'HttpOnly', 'SameSite=Strict'];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
