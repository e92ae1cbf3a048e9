import { useState } from 'preact/hooks';
import { ErrorNotice, Field } from '../components/ui.js';
import { signIn } from '../lib/api.js';
import { html } from '../lib/html.js';
import { useAction } from '../lib/use-action.js';

/**
 * Whether this page came over plain HTTP to a host other than this machine: the refresh cookie is `Secure` there, so
 * the browser drops it, and every reload signs the person out (docs/people-and-console.md#serve-it-over-https).
 */
const cookieWillBeDropped = location.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(location.hostname);

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run: onSubmit } = useAction(() => signIn(email.trim(), password), { keepBusyOnSuccess: true });

  return html`<main class="center-page">
    <div class="sign-in">
      <div class="brand brand--large">
        <svg class="brand__mark" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="7" /><path d="M8 12.5h15l-4-4M24 19.5H9l4 4" /></svg>
        <span>Interchange</span>
      </div>
      <form class="card sign-in__card" onSubmit=${onSubmit} aria-describedby="sign-in-help">
        <h1>Sign in to the console</h1>
        <p class="muted" id="sign-in-help">Use the email and password an administrator created for you.</p>
        ${
          cookieWillBeDropped &&
          html`<div class="notice notice--warning" role="note">
            <p class="notice__title">Sign-in will not last over plain HTTP</p>
            <p>
              This console is served over HTTP at ${location.host}, so your browser will not keep the sign-in cookie
              (it is sent over HTTPS only) and every reload signs you out. Serve Interchange over HTTPS, or open it at
              localhost on the machine it runs on.
            </p>
          </div>`
        }
        <div aria-live="polite">
          ${error && html`<${ErrorNotice} title="Could not sign you in" error=${error} />`}
        </div>
        <${Field} label="Email">
          ${(a) => html`<input ...${a} type="email" name="email" autocomplete="username" required value=${email}
            onInput=${(e) => setEmail(e.currentTarget.value)} />`}
        <//>
        <${Field} label="Password">
          ${(a) => html`<input ...${a} type="password" name="password" autocomplete="current-password" required
            value=${password} onInput=${(e) => setPassword(e.currentTarget.value)} />`}
        <//>
        <button type="submit" class="button button--primary button--block" disabled=${busy}>
          ${busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  </main>`;
}
