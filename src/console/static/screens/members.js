import { useState } from 'preact/hooks';
import { Badge, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { currentSession, refresh } from '../lib/api.js';
import { formatDateTime, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { listMembers, memberActions, roleChoices } from '../lib/members.js';
import { useLoad } from '../lib/use-load.js';
import { AddMemberDialog, ChangeRoleDialog, RemoveMemberDialog } from './member-dialogs.js';

const roleTones = { owner: 'info', admin: 'info', developer: 'neutral', viewer: 'neutral' };
const roleOrder = roleChoices.map(([r]) => r);

/** Owners first, then admins, developers and viewers; by email within a role. */
const byRole = (a, b) => roleOrder.indexOf(a.role) - roleOrder.indexOf(b.role) || a.user.email.localeCompare(b.user.email);

function MemberRow({ member, isMe, manages, actions, onAction }) {
  const who = member.user.name || member.user.email;
  return html`<tr>
    <th scope="row">
      <span class="cell-title">${who}${isMe && html` <span class="muted">(you)</span>`}</span>
      <span class="cell-sub">${member.user.email}</span>
    </th>
    <td>
      <${Badge} tone=${roleTones[member.role]}>${member.role}<//>
      ${actions.lastOwner && html`<span class="cell-sub">the only owner</span>`}
    </td>
    <td class="hide-sm" data-label="Member since" title=${formatDateTime(member.created_at)}>${formatRelative(member.created_at)}</td>
    ${
      manages &&
      html`<td class="actions">
      ${
        actions.change &&
        html`<button type="button" class="button button--small" onClick=${() => onAction('change', member)}
          aria-label=${`Change the role of ${member.user.email}`}>Change role</button>`
      }
      ${
        actions.remove &&
        html`<button type="button" class="button button--small button--danger-ghost" onClick=${() => onAction('remove', member)}
          aria-label=${isMe ? 'Leave this tenant' : `Remove ${member.user.email}`}>${isMe ? 'Leave' : 'Remove'}</button>`
      }
    </td>`
    }
  </tr>`;
}

/** The roles and what each may do: the screen's legend. */
function RoleLegend() {
  return html`<section class="card panel" aria-labelledby="roles-heading">
    <div class="panel__header"><h2 id="roles-heading">What each role may do</h2></div>
    <dl class="facts">
      ${roleChoices.map(([r, what]) => html`<dt><code>${r}</code></dt><dd>${what}</dd>`)}
    </dl>
  </section>`;
}

export function Members({ tenant, role }) {
  const members = useLoad(() => listMembers(tenant), [tenant]);
  const [dialog, setDialog] = useState(null);
  const [announcement, setAnnouncement] = useState('');
  const me = currentSession()?.user?.id;
  const manages = role === 'owner' || role === 'admin';
  const list = members.data ? [...members.data].sort(byRole) : null;
  const owners = list ? list.filter((m) => m.role === 'owner').length : 0;
  const close = () => setDialog(null);
  const done = (message, member) => {
    close();
    setAnnouncement(message);
    // One's own role or membership changed: the session's memberships (what the console offers) are read again. Left,
    // the tenant is gone from them and the console says so; there is no list to read again.
    if (member.user.id !== me) members.reload();
    else if (dialog?.kind === 'remove') refresh();
    else refresh().then(() => members.reload());
  };

  let dialogView = null;
  if (dialog?.kind === 'add') {
    dialogView = html`<${AddMemberDialog} tenant=${tenant} role=${role} onClose=${close}
      onAdded=${(added) => done(`Added ${added.user.email} as ${added.role}.`, added)} />`;
  } else if (dialog?.kind === 'change') {
    dialogView = html`<${ChangeRoleDialog} tenant=${tenant} role=${role} member=${dialog.member} onClose=${close}
      onChanged=${(changed) => done(`${changed.user.email} is ${changed.role} now.`, changed)} />`;
  } else if (dialog?.kind === 'remove') {
    dialogView = html`<${RemoveMemberDialog} tenant=${tenant} member=${dialog.member} isMe=${dialog.member.user.id === me}
      onClose=${close} onRemoved=${(removed) => done(`Removed ${removed.user.email}.`, removed)} />`;
  }

  return html`<section>
    <${PageHeader} title="Members"
      description=${html`The people who work in this tenant. Your role here is <strong>${role}</strong>${
        manages ? '.' : ': owners and admins add, change and remove members.'
      }`}>
      ${manages && html`<button type="button" class="button button--primary" onClick=${() => setDialog({ kind: 'add' })}>Add member</button>`}
    <//>
    <p class="visually-hidden" role="status" aria-live="polite">${announcement}</p>
    <${ErrorNotice} error=${members.error} title="Could not load the members" />
    ${members.loading && !list && html`<${Loading} />`}
    ${
      list &&
      (list.length === 0
        ? html`<${Empty} title="No members yet">
            ${manages ? 'Add people by the email of their account.' : 'An owner or admin of this tenant can add people.'}
          <//>`
        : html`<div class="table-wrap">
            <table class="table table--stack">
              <caption class="visually-hidden">Members of ${tenant}</caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Role</th>
                  <th scope="col" class="hide-sm">Member since</th>
                  ${manages && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
                </tr>
              </thead>
              <tbody>
                ${list.map(
                  (m) => html`<${MemberRow} key=${m.user.id} member=${m} isMe=${m.user.id === me} manages=${manages}
                    actions=${memberActions(role, m, owners)} onAction=${(kind, member) => setDialog({ kind, member })} />`,
                )}
              </tbody>
            </table>
          </div>`)
    }
    <${RoleLegend} />
    ${dialogView}
  </section>`;
}
