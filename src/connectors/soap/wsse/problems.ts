import type { ValidationIssue } from '../../../core/errors.ts';
import { signatureAlgorithms } from './algorithms.ts';
import type { WsSecurityOptions } from './config.ts';
import { KeyMaterialError, loadSigningMaterial, type SigningMaterial } from './keys.ts';

const base = 'config.ws_security';

/** The parts the signature covers: as configured, or the body and, when there is one, the timestamp. */
export function signedParts(options: WsSecurityOptions): ('body' | 'timestamp' | 'username_token')[] {
  return options.signature?.sign ?? (options.timestamp ? ['body', 'timestamp'] : ['body']);
}

/**
 * What is wrong with `config.ws_security` beyond its JSON shape, for a PUT or PATCH to refuse with
 * `validation_failed`: a PEM that does not parse, a key that does not belong to the certificate, a certificate
 * already expired (at `env.now`), an encrypted key without its password or with a wrong one, an algorithm for the
 * other kind of key, a signed part that is not configured. Empty when the options can be used.
 *
 * @example wsSecurityProblems({ timestamp: {}, signature: { certificate: 'x', private_key: 'y' } })
 *   // [{ path: 'config.ws_security.signature.certificate', message: 'The certificate is not a PEM X.509 certificate …' }]
 */
export function wsSecurityProblems(options: WsSecurityOptions, env: { now?: () => Date } = {}): ValidationIssue[] {
  return inspectWsSecurity(options, env).problems;
}

/**
 * `wsSecurityProblems` and, when the signature's PEM texts could be read, the signing material, so that signing
 * reads (and decrypts) the key once per message.
 */
export function inspectWsSecurity(
  options: WsSecurityOptions,
  env: { now?: () => Date } = {},
): { problems: ValidationIssue[]; material?: SigningMaterial } {
  const problems: ValidationIssue[] = [];
  if (!options.username_token && !options.timestamp && !options.signature) {
    problems.push({ path: base, message: 'ws_security sets none of username_token, timestamp and signature.' });
  }
  const ttl = options.timestamp?.ttl_seconds;
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl > 0)) {
    problems.push({ path: `${base}.timestamp.ttl_seconds`, message: 'ttl_seconds is a whole number of seconds above 0.' });
  }
  const { signature } = options;
  if (!signature) return { problems };

  const parts = signedParts(options);
  if (parts.length === 0) problems.push({ path: `${base}.signature.sign`, message: 'sign names no part to sign.' });
  if (new Set(parts).size !== parts.length)
    problems.push({ path: `${base}.signature.sign`, message: 'sign names a part twice.' });
  for (const part of parts) {
    if (part !== 'body' && !options[part]) {
      problems.push({ path: `${base}.signature.sign`, message: `sign names ${part}, but ws_security has no ${part}.` });
    }
  }
  let material: SigningMaterial | undefined;
  try {
    material = loadSigningMaterial(signature.certificate, signature.private_key, signature.private_key_password);
    const notAfter = material.certificate.validToDate;
    if (notAfter.getTime() <= (env.now ?? (() => new Date()))().getTime()) {
      problems.push({
        path: `${base}.signature.certificate`,
        message: `The certificate expired on ${notAfter.toISOString()}.`,
      });
    }
    const algorithm = signature.signature_algorithm ?? 'rsa-sha256';
    const keyType = material.privateKey.asymmetricKeyType;
    if (!Object.hasOwn(signatureAlgorithms, algorithm)) {
      problems.push({ path: `${base}.signature.signature_algorithm`, message: `${algorithm} is not a signature algorithm.` });
    } else if (signatureAlgorithms[algorithm].keyType !== keyType) {
      problems.push({
        path: `${base}.signature.signature_algorithm`,
        message: `${algorithm} does not sign with an ${keyType === 'ec' ? 'EC' : 'RSA'} key.`,
      });
    }
  } catch (error) {
    if (!(error instanceof KeyMaterialError)) throw error;
    problems.push({ path: `${base}.signature.${error.field}`, message: error.message });
  }
  return { problems, material };
}
