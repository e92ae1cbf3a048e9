import { useEffect, useState } from 'preact/hooks';
import { Loading } from './components/ui.js';
import { currentSession, onSessionChange, restoreSession, signOut } from './lib/api.js';
import { html } from './lib/html.js';
import { can } from './lib/roles.js';
import { Link, navigate, parsePath, tenantPath, usePath } from './lib/router.js';
import { AiAgents } from './screens/ai-agents.js';
import { Audit } from './screens/audit.js';
import { ExecutionDetail } from './screens/execution-detail.js';
import { Executions } from './screens/executions.js';
import { Home } from './screens/home.js';
import { IntegrationEdit } from './screens/integration-edit.js';
import { Integrations } from './screens/integrations.js';
import { Keys } from './screens/keys.js';
import { Members } from './screens/members.js';
import { SignIn } from './screens/sign-in.js';
import { TryItOut } from './screens/try-it-out.js';
import { Webhooks } from './screens/webhooks.js';

/** The screen one lands on after signing in, and for a tenant's bare path. */
const landing = 'home';

const sections = [
  { id: 'home', label: 'Home', icon: 'home' },
  { id: 'keys', label: 'API keys', icon: 'key' },
  { id: 'integrations', label: 'Integrations', icon: 'plug', also: ['new-integration'] },
  { id: 'executions', label: 'Executions', icon: 'list' },
  { id: 'webhooks', label: 'Webhooks', icon: 'bell' },
  { id: 'try', label: 'Try it out', icon: 'play' },
  { id: 'agents', label: 'AI agents', icon: 'agent' },
  { id: 'members', label: 'Members', icon: 'people' },
  { id: 'audit', label: 'Audit log', icon: 'audit', scope: 'audit.read' },
];

const icons = {
  audit: 'M7 3h8l4 4v14H7V3Zm8 0v4h4M10 12h6M10 16h6M4 7v14h3',
  home: 'M4 11.5 12 4.5l8 7M6.5 9.5V19.5h4v-5h3v5h4V9.5',
  key: 'M14 7a4 4 0 1 1-3.9 4.9L4 18v2h3v-2h2v-2h2l1.1-1.1A4 4 0 0 1 14 7Zm1.5 2.5a1 1 0 1 0 0 .01',
  plug: 'M9 3v5M15 3v5M6 8h12v3a6 6 0 0 1-12 0V8Zm6 9v4',
  list: 'M8 6h12M8 12h12M8 18h12M4 6h.01M4 12h.01M4 18h.01',
  play: 'M7 4.5v15l13-7.5-13-7.5Z',
  bell: 'M6 16v-5a6 6 0 0 1 12 0v5l2 2H4l2-2Zm4 4h4',
  people:
    'M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7Zm-6 9c0-3.3 2.7-6 6-6s6 2.7 6 6M16 4.5a3.5 3.5 0 0 1 0 6.5M18 14.5c2 .8 3 2.8 3 5.5',
  agent: 'M12 3v4M7 7h10a3 3 0 0 1 3 3v6a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3v-6a3 3 0 0 1 3-3Zm2 5.5v1.5m6-1.5v1.5M9.5 15.5h5',
};

const isActive = (section, route) =>
  route.section === section.id || section.also?.includes(route.section) || (!route.section && section.id === landing);

function Icon({ name }) {
  return html`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d=${icons[name]} /></svg>`;
}

/** A screen the person's role does not open (a link followed from elsewhere): said plainly, nothing loaded. */
function NotForRole() {
  return html`<div class="notice" role="status">
    <p class="notice__title">Not available to your role</p>
    <p>Owners and admins of this tenant can open this screen.</p>
  </div>`;
}

function Screen({ route, membership }) {
  const props = { tenant: membership.tenant_id, role: membership.role, id: route.id };
  switch (route.section) {
    case 'new-integration':
      return html`<${IntegrationEdit} ...${props} id=${null} />`;
    case 'integrations':
      return route.id ? html`<${IntegrationEdit} ...${props} />` : html`<${Integrations} ...${props} />`;
    case 'executions':
      return route.id ? html`<${ExecutionDetail} ...${props} />` : html`<${Executions} ...${props} />`;
    case 'webhooks':
      return html`<${Webhooks} ...${props} />`;
    case 'try':
      return html`<${TryItOut} ...${props} />`;
    case 'agents':
      return html`<${AiAgents} ...${props} />`;
    case 'members':
      return html`<${Members} ...${props} />`;
    case 'audit':
      return can(props.role, 'audit.read') ? html`<${Audit} ...${props} />` : html`<${NotForRole} />`;
    case 'keys':
      return html`<${Keys} ...${props} />`;
    default:
      return html`<${Home} ...${props} tenantName=${membership.tenant_name} />`;
  }
}

function TenantSwitcher({ memberships, current }) {
  const onChange = (event) => {
    const route = parsePath(location.pathname);
    navigate(tenantPath(event.currentTarget.value, route.section ?? landing));
  };
  return html`<div class="tenant-switcher">
    <label for="tenant-select">Tenant</label>
    <select id="tenant-select" value=${current} onChange=${onChange}>
      ${memberships.map((m) => html`<option value=${m.tenant_id}>${m.tenant_name || m.tenant_id}</option>`)}
    </select>
  </div>`;
}

function Shell({ session, route }) {
  const membership = session.memberships.find((m) => m.tenant_id === route.tenant);
  const [signingOut, setSigningOut] = useState(false);
  const onSignOut = async () => {
    setSigningOut(true);
    await signOut();
    navigate('/console', { replace: true });
  };
  return html`<div class="shell">
    <a class="skip-link" href="#main">Skip to content</a>
    <aside class="sidebar">
      <div class="brand">
        <svg class="brand__mark" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="7" /><path d="M8 12.5h15l-4-4M24 19.5H9l4 4" /></svg>
        <span>Interchange</span>
      </div>
      <${TenantSwitcher} memberships=${session.memberships} current=${route.tenant} />
      <nav class="nav" aria-label="Console">
        ${sections
          .filter((s) => !s.scope || can(membership?.role, s.scope))
          .map(
            (s) =>
              html`<${Link}
              class=${`nav__link${isActive(s, route) ? ' nav__link--active' : ''}`}
              aria-current=${isActive(s, route) ? 'page' : undefined}
              href=${tenantPath(route.tenant, s.id)}
              ><${Icon} name=${s.icon} /><span>${s.label}</span><//
            >`,
          )}
      </nav>
      <div class="account">
        <div class="account__who">
          <span class="account__name">${session.user?.name || session.user?.email}</span>
          <span class="account__role">${membership ? membership.role : 'no access'}</span>
        </div>
        <button type="button" class="button button--ghost button--small" onClick=${onSignOut} disabled=${signingOut}>
          Sign out
        </button>
      </div>
    </aside>
    <main id="main" class="main" tabindex="-1">
      ${
        membership
          ? html`<${Screen} key=${`${route.tenant}/${route.section}/${route.id}`} route=${route} membership=${membership} />`
          : html`<div class="notice notice--error" role="alert">
              <p class="notice__title">No access to this tenant</p>
              <p>You are not a member of <code>${route.tenant}</code>. Pick one of your tenants.</p>
            </div>`
      }
    </main>
  </div>`;
}

export function App() {
  const [session, setSession] = useState(currentSession());
  const [ready, setReady] = useState(false);
  const path = usePath();

  useEffect(() => {
    const unsubscribe = onSessionChange(setSession);
    // The refresh cookie (if any) brings the session back after a reload.
    restoreSession().finally(() => setReady(true));
    return unsubscribe;
  }, []);

  const route = parsePath(path);
  const first = session?.memberships[0];
  useEffect(() => {
    if (session && !route.tenant && first) navigate(tenantPath(first.tenant_id, landing), { replace: true });
  }, [session, route.tenant, first]);

  useEffect(() => {
    const section = sections.find((s) => s.id === route.section);
    document.title = session ? `${section ? section.label : 'Console'} · Interchange` : 'Sign in · Interchange';
  }, [session, route.section]);

  if (!ready) return html`<div class="boot"><${Loading} label="Opening the console…" /></div>`;
  if (!session) return html`<${SignIn} />`;
  if (!first) {
    return html`<div class="center-page"><div class="card">
      <h1>No tenants yet</h1>
      <p>Your account is not a member of any tenant. Ask an owner to grant you a role.</p>
      <button type="button" class="button" onClick=${() => signOut()}>Sign out</button>
    </div></div>`;
  }
  if (!route.tenant) return html`<div class="boot"><${Loading} /></div>`;
  return html`<${Shell} session=${session} route=${route} />`;
}
