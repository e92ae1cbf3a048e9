/**
 * What fixes each TLS failure, by the Node/OpenSSL code (docs/security.md#tls: the message names the config field that
 * addresses it). Verification can not be turned off, so no fix ever says so.
 */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);
const NAME_MISMATCH = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH', 'IP_ADDRESS_MISMATCH']);
const UPSTREAM_DATES = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED']);
/**
 * Alerts a server sends about the client's certificate: missing, unknown to it, expired or refused. OpenSSL 3 names
 * the TLS 1.2 ones `SSL/TLS_ALERT_…` (Node keeps the slash in the code), older builds `SSLV3_ALERT_…`.
 */
const CLIENT_CERTIFICATE_ALERT =
  /^ERR_SSL_(TLSV13_ALERT_CERTIFICATE_REQUIRED|(SSLV3|SSL\/TLS)_ALERT_(HANDSHAKE_FAILURE|BAD_CERTIFICATE|CERTIFICATE_(UNKNOWN|EXPIRED|REVOKED|UNSUPPORTED))|TLSV1_ALERT_(UNKNOWN_CA|ACCESS_DENIED|DECRYPT_ERROR))$/;
const PROTOCOL_VERSION =
  /^ERR_SSL_(TLSV1_ALERT_PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|TLSV1_ALERT_INAPPROPRIATE_FALLBACK)$/;
/** The far end answered in something that is not TLS: usually plain HTTP on the port. */
const NOT_TLS = /^ERR_SSL_(WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|RECORD_LAYER_FAILURE|HTTP_REQUEST)$/;

function fix(code: string): string {
  if (UNTRUSTED.has(code)) {
    return 'its certificate is not issued by a trusted CA: set config.tls.ca to the PEM of the CA that issued it.';
  }
  if (NAME_MISMATCH.has(code)) {
    return 'its certificate is not for this name: set config.tls.server_name to a name the certificate holds, or use that name in the URL.';
  }
  if (UPSTREAM_DATES.has(code)) {
    return 'its certificate is expired, not yet valid or revoked: the upstream must renew its certificate (no config field accepts it).';
  }
  if (CLIENT_CERTIFICATE_ALERT.test(code)) {
    return 'it refused the handshake, usually over the client certificate: set config.tls.client_certificate and config.tls.client_key to one it accepts.';
  }
  if (PROTOCOL_VERSION.test(code)) {
    return 'no TLS version is acceptable to both sides: check config.tls.min_version against what the upstream supports.';
  }
  if (NOT_TLS.test(code)) return "it does not answer in TLS on this port: check the URL's scheme (http or https) and port.";
  return 'check config.tls (ca, server_name, client_certificate, min_version) against the upstream.';
}

/**
 * The message of a `502 upstream_unreachable` whose cause is TLS: the host, the code and the config field to change.
 *
 * @example
 * tlsFailureMessage('crm.example.com', 'ERR_TLS_CERT_ALTNAME_INVALID');
 * // 'The TLS connection to crm.example.com failed (ERR_TLS_CERT_ALTNAME_INVALID): its certificate is not for …'
 */
export function tlsFailureMessage(host: string, code: string): string {
  return `The TLS connection to ${host} failed (${code}): ${fix(code)}`;
}
