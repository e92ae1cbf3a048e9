import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

/**
 * The schema of a GraphQL integration (GET /integrations/{id}/schema), read once per integration while the screen is
 * shown: `undefined` without an id, `{loading: true}` while it is read, then `{available, sdl, fetched_at, reason}`.
 * A failed read counts as unavailable, with the failure as the reason. Never asked for a SOAP integration.
 */
export function useGraphqlSchema(tenant, integrationId) {
  const [schemas, setSchemas] = useState({});
  const key = integrationId ? `${tenant}/${integrationId}` : null;
  useEffect(() => {
    if (!key || schemas[key]) return;
    const settle = (answer) => setSchemas((known) => ({ ...known, [key]: answer }));
    settle({ loading: true });
    api(`/integrations/${encodeURIComponent(integrationId)}/schema`, { tenant }).then(
      ({ data }) => settle(data),
      (error) => settle({ available: false, sdl: null, reason: error.message }),
    );
  }, [key]);
  return key ? schemas[key] : undefined;
}
