/**
 * `config.auth` in the integration form (docs/security.md#upstream-credentials): its schemes as the form shows them,
 * the form's state from a stored integration, and the write that state asks for. Secrets are write-only: the state
 * holds only what the user typed, and an empty secret of an unchanged scheme is left out so the stored one is kept.
 */

export const authSchemes = [
  {
    type: 'basic',
    label: 'Basic',
    fields: [{ name: 'username', label: 'Username', required: true }],
    secrets: [{ name: 'password', label: 'Password' }],
  },
  { type: 'bearer', label: 'Bearer token', fields: [], secrets: [{ name: 'token', label: 'Token' }] },
  {
    type: 'header',
    label: 'Header',
    fields: [{ name: 'name', label: 'Header name', required: true, placeholder: 'X-Api-Key' }],
    secrets: [{ name: 'value', label: 'Header value' }],
  },
  {
    type: 'oauth2_client_credentials',
    label: 'OAuth2 client credentials',
    fields: [
      { name: 'token_url', label: 'Token URL', type: 'url', required: true, placeholder: 'https://auth.example.com/token' },
      { name: 'client_id', label: 'Client ID', required: true },
      { name: 'scope', label: 'Scope', hint: 'Space-separated (optional).' },
      { name: 'audience', label: 'Audience', hint: 'Optional.' },
      {
        name: 'client_authentication',
        label: 'Client authentication',
        options: [
          ['client_secret_basic', 'HTTP Basic (client_secret_basic)'],
          ['client_secret_post', 'In the body (client_secret_post)'],
        ],
      },
    ],
    secrets: [{ name: 'client_secret', label: 'Client secret' }],
  },
];

export function authScheme(type) {
  return authSchemes.find((scheme) => scheme.type === type);
}

/** The connectors' older fields, each the shorthand of one scheme (refused beside `auth`). */
function shorthandAuth(connector, config) {
  if (connector === 'graphql-1.0.0' && config.token_set) {
    return { type: 'bearer', values: {}, set: { token: true }, shorthands: ['token'] };
  }
  if (connector === 'soap-1.0.0' && (config.auth_header || config.auth_value_set)) {
    return {
      type: 'header',
      values: { name: config.auth_header ?? '' },
      set: { value: config.auth_value_set === true },
      shorthands: ['auth_header', 'auth_value'],
    };
  }
  return null;
}

/**
 * What is stored: `{type, values, set, shorthands}` (`type` '' for none). `shorthands` names the older fields in use;
 * their secret cannot move to `auth` on the server, so a change here asks for it again.
 */
export function storedAuth(connector, config) {
  const auth = config?.auth;
  if (auth?.type) {
    const scheme = authScheme(auth.type);
    const set = Object.fromEntries((scheme?.secrets ?? []).map((s) => [s.name, auth[`${s.name}_set`] === true]));
    return { type: auth.type, values: auth, set, shorthands: [] };
  }
  return shorthandAuth(connector, config ?? {}) ?? { type: '', values: {}, set: {}, shorthands: [] };
}

/** The section's state: the scheme, its visible fields as stored, no secrets. */
export function authFormFrom(stored) {
  const values = {};
  for (const scheme of authSchemes) {
    for (const field of scheme.fields)
      values[field.name] = stored.values[field.name] == null ? '' : String(stored.values[field.name]);
  }
  return { type: stored.type, values, secrets: {}, touched: false };
}

/**
 * The config fields a save sends for the section: `{config, issues}`. Untouched on an edit: nothing (what is stored
 * stays, shorthands included). Otherwise `auth` (null for none) and the shorthands as null. The API merges an `auth` of
 * the stored type, so an optional field it holds cannot be emptied alone: that is an issue here, not a silent keep.
 */
export function authWrite(state, stored, isNew) {
  const config = {};
  const issues = [];
  if (!isNew && !state.touched) return { config, issues };
  for (const field of stored.shorthands) config[field] = null;
  const scheme = authScheme(state.type);
  if (!scheme) {
    if (stored.type && stored.shorthands.length === 0) config.auth = null;
    return { config, issues };
  }
  const merges = stored.type === scheme.type && stored.shorthands.length === 0;
  const auth = { type: scheme.type };
  for (const field of scheme.fields) {
    const value = state.values[field.name].trim();
    if (value !== '') auth[field.name] = value;
    else if (merges && stored.values[field.name] != null) {
      issues.push({
        path: `auth.${field.name}`,
        message: 'cannot be emptied on its own: choose “None”, save, then set the scheme up again',
      });
    }
  }
  for (const secret of scheme.secrets) {
    const value = state.secrets[secret.name] ?? '';
    if (value !== '') auth[secret.name] = value;
  }
  config.auth = auth;
  return { config, issues };
}
