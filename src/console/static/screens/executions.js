import { useEffect, useRef, useState } from 'preact/hooks';
import { Badge, Empty, ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { ApiFailure } from '../lib/api.js';
import { cancelExecution, getExecution, isActive, listExecutions } from '../lib/executions.js';
import { formatDateTime, formatDuration, formatRelative, formatTime } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, navigate, tenantPath } from '../lib/router.js';
import { useAction } from '../lib/use-action.js';
import { usePolling } from '../lib/use-polling.js';
import { integrationLabel, loadAllIntegrations } from './integrations.js';

const periods = [
  ['', 'Any time'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];
const periodMs = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };
const pageSize = 50;
/** How often an open list (and an unfinished execution's detail) is read again. */
export const pollMs = 2000;
const statuses = ['queued', 'running', 'succeeded', 'failed', 'canceled'];
const statusTones = { queued: 'neutral', running: 'info', succeeded: 'success', failed: 'danger', canceled: 'warning' };

/** Filters live in the query string, so a filtered list survives a reload and the back button. */
function readFilters() {
  const q = new URLSearchParams(location.search);
  return { integration: q.get('integration') ?? '', status: q.get('status') ?? '', since: q.get('since') ?? '' };
}

/** An execution's integration: its name when the integrations are loaded, its id beside it. */
function IntegrationName({ id, integrations }) {
  const name = integrations.find((i) => i.id === id)?.name;
  if (!name || name === id) return html`<span class="truncate">${id}</span>`;
  return html`<span class="truncate">${name}</span><span class="cell-sub"><code>${id}</code></span>`;
}

export function StatusBadge({ status }) {
  return html`<${Badge} tone=${statusTones[status] ?? 'neutral'}>${status}<//>`;
}

/**
 * Who called: the key's or the person's name as it is now, with its id beside it (two keys may share a name). A
 * caller no longer there shows its id alone.
 */
export function Caller({ execution: e }) {
  const person = e.user_id !== null;
  const id = person ? e.user_id : e.api_key_id;
  if (!id) return html`<span class="muted">—</span>`;
  const name = person ? e.user_name : e.api_key_name;
  const kind = person ? 'person' : 'key';
  return html`<span class="caller">
    <span class="caller__name">${name || html`<span class="muted">${name === '' ? `unnamed ${kind}` : `${kind} no longer there`}</span>`}</span>${' '}
    <code class="caller__id" title=${person ? 'Person' : 'API key'}>${id}</code>
  </span>`;
}

/**
 * The operation with what the call named (the SOAP method or the GraphQL operation), and the door it came through when
 * it was not the execute endpoint (an MCP tool call).
 */
export function OperationName({ execution: e }) {
  return html`<code>${e.operation}</code>${e.operation_name && html` <code class="operation-name">${e.operation_name}</code>`}${
    e.via === 'mcp' && html` <${Badge} tone="info">MCP<//>`
  }`;
}

/** The operation with its mode below it (`sync`, or `async` for one accepted with Prefer: respond-async). */
function OperationAndMode({ execution: e }) {
  return html`<${OperationName} execution=${e} /><span class="cell-sub">${e.mode}</span>`;
}

/** An unfinished execution has no duration yet, and a canceled one never ran. */
export const durationOf = (e) => (isActive(e) || e.status === 'canceled' ? '—' : formatDuration(e.duration_ms));

/** The Cancel button of a queued execution; `onDone(execution)` after a cancel, `onError(failure)` (409 included). */
export function CancelButton({ tenant, execution, onDone, onError }) {
  const { busy, run } = useAction(async () => {
    try {
      onDone(await cancelExecution(tenant, execution.id));
    } catch (failure) {
      onError(failure);
    }
  });
  return html`<button type="button" class="button button--small button--danger-ghost" onClick=${run} disabled=${busy}
    aria-label=${`Cancel execution ${execution.id}`}>${busy ? 'Canceling…' : 'Cancel'}</button>`;
}

/**
 * The list after a new read of its first page: that page as it is now, then the rows of later pages already loaded
 * ("Load more") that are older than its last row. Ids sort by time, so "older" is a smaller id.
 */
function mergeFirstPage(rows, fresh, extended) {
  if (!extended || rows === null) return fresh;
  const seen = new Set(fresh.map((e) => e.id));
  const oldest = fresh.at(-1)?.id;
  return [...fresh, ...rows.filter((e) => !seen.has(e.id) && oldest !== undefined && e.id < oldest)];
}

/**
 * One page of executions, newest first, kept to the chosen period. The API filters by integration and status and
 * pages with a cursor; the period is applied here: once a page reaches past it, there is nothing more to fetch.
 */
async function loadPage(tenant, filters, cursor) {
  const page = await listExecutions(tenant, { ...filters, limit: pageSize }, cursor);
  const cutoff = filters.since ? Date.now() - periodMs[filters.since] : null;
  const items = cutoff === null ? page.data : page.data.filter((e) => Date.parse(e.started_at) >= cutoff);
  const next = page.pagination?.next_cursor ?? null;
  return { items, next: items.length < page.data.length ? null : next };
}

const executionIdPattern = /^exe_[0-9a-z]+$/;

/** Opens the execution with the id typed in (`exe_…`), once the API has it; says so when this tenant has none. */
function FindById({ tenant }) {
  const [id, setId] = useState('');
  const [problem, setProblem] = useState(null);
  const [busy, setBusy] = useState(false);
  const find = async (event) => {
    event.preventDefault();
    const wanted = id.trim();
    if (!executionIdPattern.test(wanted)) {
      setProblem('An execution ID starts with exe_, as in exe_01jd8x7k2m9q4v6c8b1n3p5r7t.');
      return;
    }
    setBusy(true);
    try {
      await getExecution(tenant, wanted);
      navigate(tenantPath(tenant, 'executions', wanted));
    } catch (failure) {
      setProblem(
        failure instanceof ApiFailure && failure.status === 404 ? `This tenant has no execution ${wanted}.` : failure.message,
      );
      setBusy(false);
    }
  };
  return html`<form class="find" role="search" aria-label="Find an execution" onSubmit=${find}>
    <${Field} label="Execution ID" error=${problem}>
      ${(a) => html`<div class="find__row">
        <input ...${a} spellcheck=${false} autocomplete="off" placeholder="exe_…" value=${id}
          onInput=${(e) => {
            setId(e.currentTarget.value);
            setProblem(null);
          }} />
        <button type="submit" class="button" disabled=${busy}>${busy ? 'Opening…' : 'Open'}</button>
      </div>`}
    <//>
  </form>`;
}

export function Executions({ tenant, role }) {
  const filters = readFilters();
  const [integrations, setIntegrations] = useState([]);
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState(null);
  const [cancelFailure, setCancelFailure] = useState(null);
  const [announcement, setAnnouncement] = useState('');
  const [generation, setGeneration] = useState(0);
  const key = `${filters.integration}|${filters.status}|${filters.since}`;
  const executable = can(role, 'integrations.execute');
  /** The filters whose rows are shown: a poll answered after they changed is dropped. */
  const shownKey = useRef(key);
  /** Whether later pages were loaded: a poll then keeps them below the first. */
  const extended = useRef(false);

  useEffect(() => {
    loadAllIntegrations(tenant).then(setIntegrations, () => setIntegrations([]));
  }, [tenant]);

  useEffect(() => {
    let current = true;
    shownKey.current = key;
    extended.current = false;
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

  // Live while the screen is open: queued executions start, running ones finish, new ones arrive.
  usePolling(async () => {
    if (loading || rows === null) return;
    const polled = key;
    try {
      const page = await loadPage(tenant, filters, null);
      if (shownKey.current !== polled) return;
      setRows((current) => mergeFirstPage(current, page.items, extended.current));
      if (!extended.current) setNext(page.next);
      setError(null);
    } catch (failure) {
      if (shownKey.current === polled) setError(failure);
    }
  }, pollMs);

  const replaceRow = (execution) => setRows((current) => current.map((e) => (e.id === execution.id ? execution : e)));
  const onCanceled = (execution) => {
    setCancelFailure(null);
    replaceRow(execution);
    setAnnouncement(`Canceled the execution ${execution.id}.`);
  };
  const onCancelFailed = (id) => (error) => {
    setCancelFailure({ id, error });
    // A 409 means it started meanwhile: show where it is now.
    setGeneration((g) => g + 1);
  };

  const more = async () => {
    setLoading(true);
    try {
      const page = await loadPage(tenant, filters, next);
      extended.current = true;
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
    <${PageHeader} title="Executions"
      description="Every execute call, newest first, kept up to date while this page is open. Request bodies are never stored.">
      <button type="button" class="button" onClick=${() => setGeneration((g) => g + 1)} disabled=${loading}>Refresh</button>
    <//>
    <div class="toolbar">
    <form class="filters" aria-label="Filter executions" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label="Integration">
        ${(
          a,
        ) => html`<select ...${a} value=${filters.integration} onChange=${(e) => setFilter('integration', e.currentTarget.value)}>
          <option value="">All integrations</option>
          ${integrations.map((i) => html`<option value=${i.id}>${integrationLabel(i)}</option>`)}
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
          ${statuses.map((status) => html`<option value=${status}>${status[0].toUpperCase()}${status.slice(1)}</option>`)}
        </select>`}
      <//>
      <${Field} label="Started">
        ${(a) => html`<select ...${a} value=${filters.since} onChange=${(e) => setFilter('since', e.currentTarget.value)}>
          ${periods.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select>`}
      <//>
    </form>
    <${FindById} tenant=${tenant} />
    </div>
    <${ErrorNotice} error=${error} title="Could not load the executions" />
    <${ErrorNotice} error=${cancelFailure?.error} title=${`Could not cancel ${cancelFailure?.id}`} />
    <p class="visually-hidden" role="status" aria-live="polite">${announcement}</p>
    <div aria-live="polite" aria-busy=${loading ? 'true' : 'false'}>
      ${rows === null && loading && html`<${Loading} />`}
      ${
        rows?.length === 0 &&
        html`<${Empty} title="No executions match">
          ${executable ? html`Run one from <${Link} href=${tenantPath(tenant, 'try')}>Try it out<//>, or widen` : 'Widen'} the filters.
        <//>`
      }
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
                <th scope="col" class="hide-md">Caller</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-lg num">Attempts</th>
                <th scope="col" class="hide-sm num">HTTP</th>
                <th scope="col" class="hide-md num">Duration</th>
                <th scope="col" class="hide-md">Error</th>
                ${executable && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (e) => html`<tr key=${e.id}>
                  <th scope="row">
                    <${Link} href=${tenantPath(tenant, 'executions', e.id)}
                      title=${`${formatDateTime(e.started_at, { seconds: true })}, ${formatRelative(e.started_at)}`}>
                      ${formatTime(e.started_at)}
                    <//>
                    <span class="cell-sub"><code>${e.id}</code></span>
                  </th>
                  <td><${IntegrationName} id=${e.integration_id} integrations=${integrations} /></td>
                  <td class="hide-sm"><${OperationAndMode} execution=${e} /></td>
                  <td class="hide-md"><${Caller} execution=${e} /></td>
                  <td><${StatusBadge} status=${e.status} /></td>
                  <td class="hide-lg num">${e.finished_at ? e.attempts : html`<span class="muted">—</span>`}</td>
                  <td class="hide-sm num">${e.http_status ?? html`<span class="muted">—</span>`}</td>
                  <td class="hide-md num">${durationOf(e)}</td>
                  <td class="hide-md">${e.error_code ? html`<code>${e.error_code}</code>` : html`<span class="muted">—</span>`}</td>
                  ${
                    executable &&
                    html`<td class="actions">
                      ${
                        e.status === 'queued' &&
                        html`<${CancelButton} tenant=${tenant} execution=${e} onDone=${onCanceled} onError=${onCancelFailed(e.id)} />`
                      }
                    </td>`
                  }
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
