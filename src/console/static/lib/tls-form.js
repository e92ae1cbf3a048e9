/**
 * `config.tls` in the integration form (docs/security.md#tls). Answers show certificates as facts, never as PEM, and
 * the key and its password only as `_set`; so every PEM field starts empty, and an empty one keeps what is stored. The
 * API merges `tls` field by field and takes no field emptied alone: the way back is removing the whole of it.
 */

export const minVersions = ['TLSv1.2', 'TLSv1.3'];

export function tlsFormFrom(tls) {
  return {
    enabled: Boolean(tls),
    ca: '',
    client_certificate: '',
    client_key: '',
    client_key_password: '',
    server_name: tls?.server_name ?? '',
    min_version: tls?.min_version ?? 'TLSv1.2',
    touched: false,
  };
}

/** `{config, issues}` for a save: nothing when untouched, `tls: null` when switched off, else what changed. */
export function tlsWrite(state, stored, isNew) {
  const config = {};
  const issues = [];
  if (!isNew && !state.touched) return { config, issues };
  if (!state.enabled) {
    if (stored) config.tls = null;
    return { config, issues };
  }
  const tls = {};
  for (const field of ['ca', 'client_certificate', 'client_key', 'client_key_password']) {
    if (state[field].trim() !== '') tls[field] = state[field];
  }
  const serverName = state.server_name.trim();
  if (serverName !== '' && serverName !== stored?.server_name) tls.server_name = serverName;
  else if (serverName === '' && stored?.server_name) {
    issues.push({
      path: 'tls.server_name',
      message: 'cannot be emptied on its own: remove the TLS settings, save, and set them again',
    });
  }
  if (state.min_version !== (stored?.min_version ?? 'TLSv1.2')) tls.min_version = state.min_version;
  // A section switched on with nothing in it writes an empty object: the defaults, stored as such.
  if (Object.keys(tls).length > 0 || !stored) config.tls = tls;
  return { config, issues };
}
