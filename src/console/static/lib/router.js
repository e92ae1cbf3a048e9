import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

/** A small History API router: the console's screens are paths below /console. */
const listeners = new Set();
const notify = () => {
  for (const listener of listeners) listener();
};
addEventListener('popstate', notify);

export function navigate(path, { replace = false } = {}) {
  if (path === location.pathname + location.search) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', path);
  notify();
}

/** The current path and query string (re-renders the caller when either changes). */
export function usePath() {
  const [path, setPath] = useState(location.pathname + location.search);
  useEffect(() => {
    const listener = () => setPath(location.pathname + location.search);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return path;
}

/** An ordinary link that moves within the console without reloading it (modified clicks open as usual). */
export function Link({ href, children, ...rest }) {
  const onClick = (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

/** `/console/t/acme/keys/key_1` → `{tenant: 'acme', section: 'keys', id: 'key_1'}`. */
export function parsePath(path) {
  const parts = path
    .split('?')[0]
    .replace(/^\/console\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(decodeURIComponent);
  if (parts[0] !== 't' || !parts[1]) return { tenant: null, section: parts[0] ?? null, id: null };
  return { tenant: parts[1], section: parts[2] ?? null, id: parts[3] ?? null };
}

/** The path of a screen of a tenant: `tenantPath('acme', 'integrations', 'crm')`. */
export function tenantPath(tenant, ...rest) {
  return ['/console/t', tenant, ...rest].map((part, i) => (i === 0 ? part : encodeURIComponent(part))).join('/');
}
