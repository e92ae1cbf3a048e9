import { useEffect, useState } from 'preact/hooks';
import { AgentsSection } from '../components/agents-section.js';
import { AuthSection } from '../components/auth-section.js';
import { ConfirmDialog } from '../components/dialog.js';
import { OperationsSection } from '../components/operations-section.js';
import { ResilienceSection } from '../components/resilience-section.js';
import { TlsSection } from '../components/tls-section.js';
import { ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { WsSecuritySection } from '../components/ws-security-section.js';
import { apiVersioned } from '../lib/api.js';
import { authFormFrom, authWrite, storedAuth } from '../lib/auth-form.js';
import { connectors } from '../lib/connectors.js';
import { html } from '../lib/html.js';
import { resilienceFormFrom, resilienceWrite } from '../lib/resilience-form.js';
import { can } from '../lib/roles.js';
import { Link, navigate, tenantPath } from '../lib/router.js';
import { tlsFormFrom, tlsWrite } from '../lib/tls-form.js';
import { wsSecurityFormFrom, wsSecurityWrite } from '../lib/ws-security-form.js';
import { IntegrationTest } from './integration-test.js';

/** The form's state from a stored integration (or blank for a new one). */
function formFrom(integration) {
  const connector = integration?.connector ?? 'graphql-1.0.0';
  const config = integration?.config ?? {};
  const values = {};
  for (const field of connectors[connector]?.fields ?? [])
    values[field.name] = config[field.name] == null ? '' : String(config[field.name]);
  return {
    id: integration?.id ?? '',
    name: integration?.name ?? '',
    connector,
    values,
    auth: authFormFrom(storedAuth(connector, config)),
    tls: tlsFormFrom(config.tls),
    wsSecurity: wsSecurityFormFrom(config.ws_security),
    resilience: resilienceFormFrom(config),
  };
}

/**
 * The config to send, and what the form itself finds wrong (`issues`, paths below `config.`). PUT sends what is
 * filled in; PATCH also sends emptied fields as null, and of the credential sections only those touched.
 */
function configFrom(form, stored, patch) {
  const config = {};
  for (const field of connectors[form.connector].fields) {
    const raw = form.values[field.name].trim();
    if (raw === '') {
      if (patch) config[field.name] = null;
    } else config[field.name] = field.type === 'number' ? Number(raw) : raw;
  }
  const storedConfig = stored?.config ?? {};
  const sections = [
    authWrite(form.auth, storedAuth(form.connector, storedConfig), !patch),
    tlsWrite(form.tls, storedConfig.tls, !patch),
    resilienceWrite(form.resilience, storedConfig, !patch),
  ];
  if (form.connector === 'soap-1.0.0') sections.push(wsSecurityWrite(form.wsSecurity, storedConfig.ws_security, !patch));
  for (const section of sections) Object.assign(config, section.config);
  return { config, issues: sections.flatMap((section) => section.issues) };
}

/**
 * A write refused by its precondition, said in the form's words: a new integration's id is taken (nothing was
 * replaced), or someone changed or deleted the integration since this form loaded it (nothing was overwritten).
 */
function refusal(failure, isNew, id) {
  if (failure?.code !== 'precondition_failed') return failure;
  const message = isNew
    ? `An integration with the id “${id}” already exists; nothing was changed. Choose another id, or open that integration to edit it.`
    : 'Someone changed or deleted this integration after you opened it, so your changes were not saved. Reload it to see the current version, then make your changes again.';
  return {
    ...failure,
    message,
    requestId: failure.requestId,
    code: failure.code,
    stale: !isNew,
    ...(isNew && { details: { issues: [{ path: 'id', message: 'is taken' }] } }),
  };
}

/** `config.base_url` → `{base_url: message}`, for the fields the API named. */
function fieldErrors(error) {
  const errors = {};
  for (const issue of error?.details?.issues ?? []) {
    const name = issue.path.replace(/^config\./, '');
    errors[name] ??= issue.message;
  }
  return errors;
}

export function IntegrationEdit({ tenant, role, id }) {
  const isNew = id === null;
  const writable = can(role, 'integrations.write');
  const [stored, setStored] = useState(null);
  /** The version the form was loaded from: edits and the delete are sent with it as If-Match. */
  const [etag, setEtag] = useState(null);
  const [reloads, setReloads] = useState(0);
  const [form, setForm] = useState(isNew ? formFrom(null) : null);
  const [loadError, setLoadError] = useState(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState(null);
  const [status, setStatus] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [deleteError, setDeleteError] = useState(null);
  const [catalogSaving, setCatalogSaving] = useState(false);

  useEffect(() => {
    if (isNew) return;
    apiVersioned(`/integrations/${encodeURIComponent(id)}`, { tenant }).then((r) => {
      setStored(r.body.data);
      setEtag(r.etag);
      setForm(formFrom(r.body.data));
      setSaveError(null);
    }, setLoadError);
  }, [tenant, id, isNew, reloads]);

  if (loadError) return html`<${ErrorNotice} error=${loadError} title="Could not load the integration" />`;
  if (!form) return html`<${Loading} />`;

  const definition = connectors[form.connector];
  const errors = fieldErrors(saveError);
  const setValue = (name, value) => setForm((f) => ({ ...f, values: { ...f.values, [name]: value } }));
  /** A credential section's change: `update` maps its state to the next; the section now counts as touched. */
  const sectionChange = (key) => (update) => setForm((f) => ({ ...f, [key]: { ...update(f[key]), touched: true } }));
  const setConnector = (connector) => setForm((f) => ({ ...formFrom({ connector }), id: f.id, name: f.name }));

  const onSubmit = async (event) => {
    event.preventDefault();
    setSaving(true);
    setSaveError(null);
    setStatus('');
    try {
      const path = `/integrations/${encodeURIComponent(isNew ? form.id.trim() : id)}`;
      const name = form.name.trim();
      const { config, issues } = configFrom(form, stored, !isNew);
      if (issues.length > 0) {
        const details = { issues: issues.map((i) => ({ ...i, path: `config.${i.path}` })) };
        setSaveError({ message: 'Some fields need a change before saving.', details });
        return;
      }
      // Creating never replaces (If-None-Match: *); saving writes over the version loaded, or is refused (If-Match).
      const saved = isNew
        ? await apiVersioned(path, {
            method: 'PUT',
            tenant,
            headers: { 'if-none-match': '*' },
            body: { ...(name && { name }), connector: form.connector, config },
          })
        : await apiVersioned(path, {
            method: 'PATCH',
            tenant,
            headers: { 'if-match': etag },
            body: { ...(name && { name }), config },
          });
      if (isNew) {
        navigate(tenantPath(tenant, 'integrations', saved.body.data.id), { replace: true });
        return;
      }
      // Read back whole: GET adds the circuit breaker's state, which a change starts anew (docs/resilience.md).
      const current = await apiVersioned(path, { tenant });
      setStored(current.body.data);
      setEtag(current.etag);
      setForm(formFrom(current.body.data));
      setStatus('Saved.');
    } catch (failure) {
      setSaveError(refusal(failure, isNew, form.id.trim()));
    } finally {
      setSaving(false);
    }
  };

  /**
   * A change of the `catalog` settings alone (PATCH merges it field by field), written over the version loaded. The
   * configuration form keeps what is being typed in it; it is saved later over the version this change made.
   */
  const saveCatalog = async (catalog) => {
    setCatalogSaving(true);
    try {
      const path = `/integrations/${encodeURIComponent(id)}`;
      await apiVersioned(path, { method: 'PATCH', tenant, headers: { 'if-match': etag }, body: { catalog } });
      const current = await apiVersioned(path, { tenant });
      setStored(current.body.data);
      setEtag(current.etag);
    } catch (failure) {
      throw refusal(failure, false, id);
    } finally {
      setCatalogSaving(false);
    }
  };
  const reload = () => setReloads((n) => n + 1);

  const onDelete = async () => {
    try {
      await apiVersioned(`/integrations/${encodeURIComponent(id)}`, { method: 'DELETE', tenant, headers: { 'if-match': etag } });
      navigate(tenantPath(tenant, 'integrations'));
    } catch (failure) {
      setDeleteError(
        failure?.code === 'precondition_failed'
          ? {
              ...failure,
              message: 'Someone changed this integration after you opened it; it was not deleted. Reload it, then decide again.',
            }
          : failure,
      );
    }
  };

  return html`<section>
    <p class="breadcrumbs"><${Link} href=${tenantPath(tenant, 'integrations')}>Integrations<//> / ${isNew ? 'New' : id}</p>
    <${PageHeader}
      title=${isNew ? 'New integration' : stored?.name || id}
      description=${isNew ? 'Point a connector at an external system.' : `${definition?.label ?? form.connector} integration · ${id}`}
    >
      ${!isNew && writable && html`<button type="button" class="button button--danger-ghost" onClick=${() => setConfirmDelete(true)}>Delete</button>`}
    <//>
    <div class="columns">
      <form class="card form" onSubmit=${onSubmit} aria-labelledby="config-heading">
        <h2 id="config-heading">Configuration</h2>
        ${
          isNew &&
          html`<${Field} label="ID" hint="Used in the execute URL: /api/v1/integrations/{id}/execute." error=${errors.id}>
            ${(a) => html`<input ...${a} required maxlength="128" spellcheck=${false} value=${form.id}
              onInput=${(e) => setForm((f) => ({ ...f, id: e.currentTarget.value }))} />`}
          <//>`
        }
        <${Field} label="Name" error=${errors.name}>
          ${(a) => html`<input ...${a} maxlength="200" value=${form.name}
            onInput=${(e) => setForm((f) => ({ ...f, name: e.currentTarget.value }))} />`}
        <//>
        ${
          isNew
            ? html`<fieldset class="fieldset">
                <legend>Connector</legend>
                <div class="segmented">
                  ${Object.entries(connectors).map(
                    ([value, c]) => html`<label class="segmented__option">
                      <input type="radio" name="connector" value=${value} checked=${form.connector === value}
                        onChange=${() => setConnector(value)} />
                      <span>${c.label}</span>
                    </label>`,
                  )}
                </div>
              </fieldset>`
            : html`<p class="muted">Connector <code>${form.connector}</code></p>`
        }
        ${
          definition
            ? html`${definition.fields.map(
                (field) => html`<${Field} label=${field.label} hint=${field.hint} error=${errors[field.name]}>
                  ${(a) =>
                    field.options
                      ? html`<select ...${a} value=${form.values[field.name]}
                          onChange=${(e) => setValue(field.name, e.currentTarget.value)}>
                          <option value="">Default</option>
                          ${field.options.map((o) => html`<option value=${o}>${o}</option>`)}
                        </select>`
                      : html`<input ...${a} type=${field.type === 'url' ? 'url' : field.type === 'number' ? 'number' : 'text'}
                          required=${field.required && isNew} min=${field.min} max=${field.max}
                          placeholder=${field.placeholder} spellcheck=${false} value=${form.values[field.name]}
                          onInput=${(e) => setValue(field.name, e.currentTarget.value)} />`}
                <//>`,
              )}
              <${AuthSection} stored=${storedAuth(form.connector, stored?.config)} state=${form.auth} errors=${errors}
                onChange=${sectionChange('auth')} />
              <${TlsSection} stored=${stored?.config?.tls} state=${form.tls} errors=${errors} onChange=${sectionChange('tls')} />
              <${ResilienceSection} circuit=${stored?.circuit} state=${form.resilience} errors=${errors}
                onChange=${sectionChange('resilience')} />
              ${
                form.connector === 'soap-1.0.0' &&
                html`<${WsSecuritySection} stored=${stored?.config?.ws_security} state=${form.wsSecurity} errors=${errors}
                  onChange=${sectionChange('wsSecurity')} />`
              }`
            : html`<p class="muted">This connector is not offered by this service; its configuration cannot be edited here.</p>`
        }
        <div aria-live="polite">
          ${saveError && html`<${ErrorNotice} title="Not saved" error=${saveError} />`}
          ${saveError?.stale && html`<button type="button" class="button" onClick=${reload}>Reload the current version</button>`}
          ${status && html`<p class="notice notice--success" role="status">${status}</p>`}
        </div>
        ${
          writable &&
          definition &&
          html`<div class="form__actions">
            <button type="submit" class="button button--primary" disabled=${saving}>
              ${saving ? 'Saving…' : isNew ? 'Create integration' : 'Save changes'}
            </button>
          </div>`
        }
      </form>
      ${
        !isNew &&
        html`<div class="stack stack--cards">
          <${IntegrationTest} tenant=${tenant} id=${id} disabled=${!can(role, 'integrations.execute')} />
          ${
            // Each starts anew (its last failure gone) when the integration is read again.
            definition &&
            html`<${AgentsSection} key=${`agents-${reloads}`} tenant=${tenant} integration=${stored} writable=${writable} saving=${catalogSaving}
                save=${saveCatalog} onReload=${reload} />
              <${OperationsSection} key=${`operations-${reloads}`} tenant=${tenant} integration=${stored} writable=${writable} saving=${catalogSaving}
                save=${saveCatalog} onReload=${reload} />`
          }
        </div>`
      }
    </div>
    ${
      confirmDelete &&
      html`<${ConfirmDialog} title=${`Delete “${stored?.name || id}”?`} confirmLabel="Delete integration"
        onConfirm=${onDelete} onClose=${() => setConfirmDelete(false)}
        error=${deleteError && html`<${ErrorNotice} error=${deleteError} />`}>
        <p>Callers of <code>/integrations/${id}/execute</code> get <code>not_found</code> from now on.</p>
      <//>`
    }
  </section>`;
}
