/**
 * `config.ws_security` in the SOAP integration form (docs/security.md#ws-security): three parts, each switched on or
 * off. Its secrets (the UsernameToken's password, the signing key and its password) are write-only and the signing
 * certificate is shown by its facts: an empty field keeps what is stored. A part switched off is removed (`null`).
 */

export const signatureAlgorithms = ['rsa-sha256', 'rsa-sha1', 'ecdsa-sha256'];
export const digestAlgorithms = ['sha256', 'sha1'];
export const keyReferences = [
  ['binary_security_token', 'Binary security token (the certificate itself)'],
  ['issuer_serial', 'Issuer and serial number'],
  ['subject_key_identifier', 'Subject key identifier'],
];

export function wsSecurityFormFrom(ws) {
  const token = ws?.username_token;
  const timestamp = ws?.timestamp;
  const signature = ws?.signature;
  return {
    touched: false,
    username_token: {
      enabled: Boolean(token),
      username: token?.username ?? '',
      password: '',
      password_type: token?.password_type ?? 'text',
    },
    timestamp: { enabled: Boolean(timestamp), ttl_seconds: String(timestamp?.ttl_seconds ?? 300) },
    signature: {
      enabled: Boolean(signature),
      certificate: '',
      private_key: '',
      private_key_password: '',
      signature_algorithm: signature?.signature_algorithm ?? 'rsa-sha256',
      digest_algorithm: signature?.digest_algorithm ?? 'sha256',
      key_reference: signature?.key_reference ?? 'binary_security_token',
    },
  };
}

/** The fields of a part that are typed in whole, PEM and secrets: sent only when filled in. */
const writeOnly = {
  username_token: ['password'],
  timestamp: [],
  signature: ['certificate', 'private_key', 'private_key_password'],
};

function partWrite(name, part) {
  const value = {};
  for (const [field, given] of Object.entries(part)) {
    if (field === 'enabled') continue;
    if (writeOnly[name].includes(field)) {
      if (given !== '') value[field] = given;
    } else if (field === 'ttl_seconds') value[field] = Number(given);
    else if (given.trim() !== '') value[field] = given.trim();
  }
  return value;
}

/** `{config, issues}` for a save: nothing when untouched; else each part switched on, and those switched off as null. */
export function wsSecurityWrite(state, stored, isNew) {
  const config = {};
  const issues = [];
  if (!isNew && !state.touched) return { config, issues };
  const ws = {};
  for (const name of Object.keys(writeOnly)) {
    if (state[name].enabled) ws[name] = partWrite(name, state[name]);
    else if (stored?.[name]) ws[name] = null;
  }
  if (state.username_token.enabled && state.username_token.username.trim() === '') {
    issues.push({ path: 'ws_security.username_token.username', message: 'is required for a UsernameToken' });
  }
  const ttl = state.timestamp.ttl_seconds;
  if (state.timestamp.enabled && !(Number.isInteger(Number(ttl)) && Number(ttl) >= 1 && Number(ttl) <= 86_400)) {
    issues.push({ path: 'ws_security.timestamp.ttl_seconds', message: 'must be a whole number of seconds, 1 to 86400' });
  }
  const anyOn = Object.values(ws).some((part) => part !== null);
  if (anyOn) config.ws_security = ws;
  else if (stored) config.ws_security = null;
  return { config, issues };
}
