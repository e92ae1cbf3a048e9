import { useEffect, useState } from 'preact/hooks';
import { Badge, Empty, ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { api } from '../lib/api.js';
import { formatDateTime, formatDuration, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { Link, navigate, tenantPath } from '../lib/router.js';
import { loadAllIntegrations } from './integrations.js';

const periods = [
  ['', 'Any time'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];
const periodMs = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };
const pageSize = 50;

/** Filters live in the query string, so a filtered list survives a reload and the back button. */
function readFilters() {
  const q = new URLSearchParams(location.search);
  return { integration: q.get('integration') ?? '', status: q.get('status') ?? '', since: q.get('since') ?? '' };
}

export function StatusBadge({ status }) {
  return html`<${Badge} tone=${status === 'succeeded' ? 'success' : 'danger'}>${status}<//>`;
}

/**
 * One page of executions, newest first, kept to the chosen period. The API filters by integration and status and
 * pages with a cursor; the period is applied here: once a page reaches past it, there is nothing more to fetch.
 */
async function loadPage(tenant, filters, cursor) {
  const q = new URLSearchParams({ limit: String(pageSize) });
  if (filters.integration) q.set('integration_id', filters.integration);
  if (filters.status) q.set('status', filters.status);
  if (cursor) q.set('cursor', cursor);
  const page = await api(`/executions?${q}`, { tenant });
  const cutoff = filters.since ? Date.now() - periodMs[filters.since] : null;
  const items = cutoff === null ? page.data : page.data.filter((e) => Date.parse(e.started_at) >= cutoff);
  const next = page.pagination?.next_cursor ?? null;
  return { items, next: items.length < page.data.length ? null : next };
}

export function Executions({ tenant }) {
  const filters = readFilters();
  const [integrations, setIntegrations] = useState([]);
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState(null);
  const [generation, setGeneration] = useState(0);
  const key = `${filters.integration}|${filters.status}|${filters.since}`;

  useEffect(() => {
    loadAllIntegrations(tenant).then(setIntegrations, () => setIntegrations([]));
  }, [tenant]);

  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(null);
    loadPage(tenant, filters, null)
      .then(
        (page) => {
          if (!current) return;
          setRows(page.items);
          setNext(page.next);
        },
        (failure) => current && setError(failure),
      )
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [tenant, key, generation]);

  const more = async () => {
    setLoading(true);
    try {
      const page = await loadPage(tenant, filters, next);
      setRows((r) => [...r, ...page.items]);
      setNext(page.next);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  const setFilter = (name, value) => {
    const q = new URLSearchParams({ ...filters, [name]: value });
    for (const [k, v] of [...q]) if (!v) q.delete(k);
    const query = q.toString();
    navigate(`${tenantPath(tenant, 'executions')}${query ? `?${query}` : ''}`, { replace: true });
  };

  return html`<section>
    <${PageHeader} title="Executions" description="Every execute call, newest first. Request and response bodies are never stored.">
      <button type="button" class="button" onClick=${() => setGeneration((g) => g + 1)} disabled=${loading}>Refresh</button>
    <//>
    <form class="filters" aria-label="Filter executions" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label="Integration">
        ${(
          a,
        ) => html`<select ...${a} value=${filters.integration} onChange=${(e) => setFilter('integration', e.currentTarget.value)}>
          <option value="">All integrations</option>
          ${integrations.map((i) => html`<option value=${i.id}>${i.name || i.id}</option>`)}
          ${
            filters.integration &&
            !integrations.some((i) => i.id === filters.integration) &&
            html`<option value=${filters.integration}>${filters.integration}</option>`
          }
        </select>`}
      <//>
      <${Field} label="Status">
        ${(a) => html`<select ...${a} value=${filters.status} onChange=${(e) => setFilter('status', e.currentTarget.value)}>
          <option value="">Any status</option>
          <option value="succeeded">Succeeded</option>
          <option value="failed">Failed</option>
        </select>`}
      <//>
      <${Field} label="Started">
        ${(a) => html`<select ...${a} value=${filters.since} onChange=${(e) => setFilter('since', e.currentTarget.value)}>
          ${periods.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select>`}
      <//>
    </form>
    <${ErrorNotice} error=${error} title="Could not load the executions" />
    <div aria-live="polite" aria-busy=${loading ? 'true' : 'false'}>
      ${rows === null && loading && html`<${Loading} />`}
      ${rows?.length === 0 && html`<${Empty} title="No executions match">Run one from Try it out, or widen the filters.<//>`}
      ${
        rows?.length > 0 &&
        html`<div class="table-wrap">
          <table class="table">
            <caption class="visually-hidden">Executions, ${rows.length} shown</caption>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Integration</th>
                <th scope="col" class="hide-sm">Operation</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-sm num">HTTP</th>
                <th scope="col" class="hide-md num">Duration</th>
                <th scope="col" class="hide-md">Error</th>
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (e) => html`<tr key=${e.id}>
                  <th scope="row">
                    <${Link} href=${tenantPath(tenant, 'executions', e.id)} title=${formatDateTime(e.started_at)}>
                      ${formatRelative(e.started_at)}
                    <//>
                    <span class="cell-sub"><code>${e.id}</code></span>
                  </th>
                  <td><span class="truncate">${e.integration_id}</span></td>
                  <td class="hide-sm"><code>${e.operation}</code></td>
                  <td><${StatusBadge} status=${e.status} /></td>
                  <td class="hide-sm num">${e.http_status}</td>
                  <td class="hide-md num">${formatDuration(e.duration_ms)}</td>
                  <td class="hide-md">${e.error_code ? html`<code>${e.error_code}</code>` : html`<span class="muted">—</span>`}</td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>`
      }
    </div>
    ${next && html`<div class="more"><button type="button" class="button" onClick=${more} disabled=${loading}>Load more</button></div>`}
  </section>`;
}
