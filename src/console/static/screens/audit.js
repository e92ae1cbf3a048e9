import { useEffect, useState } from 'preact/hooks';
import { Badge, Empty, ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { api } from '../lib/api.js';
import { formatDateTime, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { Link, navigate, tenantPath } from '../lib/router.js';

/** The actions the log records (docs/audit.md#actions), grouped as the filter offers them. */
const actionGroups = [
  ['API keys', ['api_key.created', 'api_key.rotated', 'api_key.revoked', 'api_key.imported']],
  ['Integrations', ['integration.created', 'integration.replaced', 'integration.updated', 'integration.deleted']],
  ['Webhooks', ['webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated', 'webhook.delivery_resent']],
  ['Members', ['member.added', 'member.role_changed', 'member.removed']],
  ['People', ['user.created', 'user.signed_in', 'user.sign_in_failed']],
  ['Service', ['signing_key.rotated', 'tenant.created']],
];

const filterNames = ['action', 'actor_id', 'target_id', 'since', 'until'];
const pageSize = 50;

const actionTone = (action) =>
  /\.(deleted|revoked|removed|sign_in_failed)$/.test(action)
    ? 'danger'
    : /\.(created|added|imported)$/.test(action)
      ? 'success'
      : 'info';

const actorKinds = { api_key: 'API key', user: 'Person', cli: 'CLI', system: 'Service' };

function readFilters() {
  const query = new URLSearchParams(location.search);
  return Object.fromEntries(filterNames.map((name) => [name, query.get(name) ?? '']));
}

/** An RFC 3339 time as a `datetime-local` value (the browser's time zone), and back. */
const toLocalInput = (iso) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
};
const fromLocalInput = (value) => (value ? new Date(value).toISOString() : '');

/** Where a target opens in the console, when it has a screen of its own. */
function targetLink(tenant, target) {
  if (target.type === 'integration') return tenantPath(tenant, 'integrations', target.id);
  if (target.type === 'api_key') return tenantPath(tenant, 'keys');
  if (target.type === 'webhook') return tenantPath(tenant, 'webhooks');
  if (target.type === 'user') return tenantPath(tenant, 'members');
  return null;
}

function FilterForm({ filters, onApply }) {
  const [draft, setDraft] = useState(filters);
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const set = (name) => (event) => setDraft({ ...draft, [name]: event.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    onApply(draft);
  };
  return html`<form class="filters filters--audit" aria-label="Filter the audit log" onSubmit=${submit}>
    <${Field} label="Action">
      ${(a) => html`<select ...${a} value=${draft.action} onChange=${set('action')}>
        <option value="">Every action</option>
        ${actionGroups.map(
          ([group, actions]) => html`<optgroup label=${group}>
            ${actions.map((action) => html`<option value=${action}>${action}</option>`)}
          </optgroup>`,
        )}
      </select>`}
    <//>
    <${Field} label="Actor ID" hint="A key, user or CLI account">
      ${(a) => html`<input ...${a} value=${draft.actor_id} spellcheck=${false} autocomplete="off" placeholder="key_… or usr_…" onInput=${set('actor_id')} />`}
    <//>
    <${Field} label="Target ID" hint="An integration, key, webhook or user">
      ${(a) => html`<input ...${a} value=${draft.target_id} spellcheck=${false} autocomplete="off" onInput=${set('target_id')} />`}
    <//>
    <${Field} label="From">
      ${(a) => html`<input ...${a} type="datetime-local" step="1" value=${toLocalInput(draft.since)}
        onInput=${(e) => setDraft({ ...draft, since: fromLocalInput(e.currentTarget.value) })} />`}
    <//>
    <${Field} label="Until">
      ${(a) => html`<input ...${a} type="datetime-local" step="1" value=${toLocalInput(draft.until)}
        onInput=${(e) => setDraft({ ...draft, until: fromLocalInput(e.currentTarget.value) })} />`}
    <//>
    <div class="filters__actions">
      <button type="submit" class="button button--primary">Apply</button>
      <button type="button" class="button" onClick=${() => onApply(Object.fromEntries(filterNames.map((n) => [n, ''])))}>
        Clear
      </button>
    </div>
  </form>`;
}

function EventRow({ tenant, event, onFilter }) {
  const link = targetLink(tenant, event.target);
  return html`<tr key=${event.id}>
    <td class="when">
      <span class="cell-title">${formatDateTime(event.at, { seconds: true })}</span>
      <span class="cell-sub">${formatRelative(event.at)}</span>
    </td>
    <th scope="row"><${Badge} tone=${actionTone(event.action)}>${event.action}<//></th>
    <td>
      <span class="cell-title">${event.actor.name ?? event.actor.id}</span>
      <span class="cell-sub">${actorKinds[event.actor.type] ?? event.actor.type} <code>${event.actor.id}</code></span>
      <button type="button" class="link-button" onClick=${() => onFilter({ actor_id: event.actor.id })}
        aria-label=${`Only changes by ${event.actor.id}`}>only this actor</button>
    </td>
    <td>
      <span class="cell-title">${link ? html`<${Link} href=${link}><code>${event.target.id}</code><//>` : html`<code>${event.target.id}</code>`}</span>
      <span class="cell-sub">${event.target.type}</span>
      <button type="button" class="link-button" onClick=${() => onFilter({ target_id: event.target.id })}
        aria-label=${`Only changes to ${event.target.id}`}>only this target</button>
    </td>
    <td class="hide-sm">
      ${
        event.changes.length === 0
          ? html`<span class="muted">—</span>`
          : html`<ul class="changes">${event.changes.map((path) => html`<li><code>${path}</code></li>`)}</ul>`
      }
    </td>
    <td class="hide-md">
      <span class="cell-title">${event.ip ?? html`<span class="muted">—</span>`}</span>
      ${event.request_id && html`<span class="cell-sub"><code>${event.request_id}</code></span>`}
    </td>
  </tr>`;
}

/** The tenant's audit log (owners and admins): who changed what, from where, filtered, newest first. */
export function Audit({ tenant }) {
  const filters = readFilters();
  const key = filterNames.map((n) => filters[n]).join('|');
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState(null);
  const [generation, setGeneration] = useState(0);

  const load = (cursor) => {
    const query = new URLSearchParams({ limit: String(pageSize) });
    for (const name of filterNames) if (filters[name]) query.set(name, filters[name]);
    if (cursor) query.set('cursor', cursor);
    return api(`/audit-events?${query}`, { tenant });
  };

  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(null);
    load(null)
      .then(
        (page) => {
          if (!current) return;
          setRows(page.data);
          setNext(page.pagination?.next_cursor ?? null);
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
      const page = await load(next);
      setRows((r) => [...r, ...page.data]);
      setNext(page.pagination?.next_cursor ?? null);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  const apply = (changed) => {
    const query = new URLSearchParams();
    const merged = { ...filters, ...changed };
    for (const name of filterNames) if (merged[name]) query.set(name, merged[name]);
    const text = query.toString();
    navigate(`${tenantPath(tenant, 'audit')}${text ? `?${text}` : ''}`, { replace: true });
  };
  const filtered = filterNames.some((n) => filters[n]);

  return html`<section>
    <${PageHeader} title="Audit log"
      description="Who changed what in this tenant, from where, newest first. Events are never changed or deleted before their retention ends.">
      <button type="button" class="button" onClick=${() => setGeneration((g) => g + 1)} disabled=${loading}>Refresh</button>
    <//>
    <${FilterForm} filters=${filters} onApply=${apply} />
    <${ErrorNotice} error=${error} title="Could not load the audit log" />
    ${loading && rows === null && html`<${Loading} />`}
    ${
      rows &&
      (rows.length === 0
        ? html`<${Empty} title=${filtered ? 'No events match these filters' : 'No changes recorded yet'}>
            ${filtered ? 'Clear the filters to see every event.' : 'Creating a key, an integration or a webhook, or adding a member, records who did it here.'}
          <//>`
        : html`<div class="table-wrap">
            <table class="table table--audit">
              <caption class="visually-hidden">Audit events of ${tenant}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Target</th>
                  <th scope="col" class="hide-sm">Changed fields</th>
                  <th scope="col" class="hide-md">From</th>
                </tr>
              </thead>
              <tbody>
                ${rows.map((event) => html`<${EventRow} key=${event.id} tenant=${tenant} event=${event} onFilter=${apply} />`)}
              </tbody>
            </table>
          </div>
          ${
            next &&
            html`<div class="more">
              <button type="button" class="button" onClick=${more} disabled=${loading}>${loading ? 'Loading…' : 'Load more'}</button>
            </div>`
          }`)
    }
  </section>`;
}
