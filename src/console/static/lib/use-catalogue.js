import { useEffect, useState } from 'preact/hooks';
import { loadAllOperations } from './catalog.js';

/**
 * The operation catalogue of an integration (every page of GET /integrations/{id}/operations), read once per
 * integration while the screen is shown: `undefined` without an id, `{loading: true}` while it is read, then
 * `{entries}` or `{error}`.
 */
export function useCatalogue(tenant, integrationId) {
  const [catalogues, setCatalogues] = useState({});
  const key = integrationId ? `${tenant}/${integrationId}` : null;
  useEffect(() => {
    if (!key || catalogues[key]) return;
    const settle = (answer) => setCatalogues((known) => ({ ...known, [key]: answer }));
    settle({ loading: true });
    loadAllOperations(tenant, integrationId).then(
      (entries) => settle({ entries }),
      (error) => settle({ error }),
    );
  }, [key]);
  return key ? catalogues[key] : undefined;
}
