import { useState } from 'preact/hooks';
import { ConfirmDialog, Dialog } from '../components/dialog.js';
import { ErrorNotice, Field, FormFooter } from '../components/ui.js';
import { html } from '../lib/html.js';
import { addMember, assignableRoles, changeRole, removeMember } from '../lib/members.js';
import { useAction } from '../lib/use-action.js';

/** The roles `role` may give, as a labelled select; what the chosen one may do is its hint. */
function RoleField({ role, value, onChange }) {
  const choices = assignableRoles(role);
  const hint = choices.find(([r]) => r === value)?.[1];
  return html`<${Field} label="Role" hint=${hint}>
    ${(a) => html`<select ...${a} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${choices.map(([r]) => html`<option value=${r}>${r}</option>`)}
    </select>`}
  <//>`;
}

/** The add form: an existing account's email and a role; resolves with the new member through `onAdded`. */
export function AddMemberDialog({ tenant, role, onClose, onAdded }) {
  const [email, setEmail] = useState('');
  const [chosen, setChosen] = useState('viewer');
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(async () => onAdded(await addMember(tenant, { email: email.trim(), role: chosen })), {
    keepBusyOnSuccess: true,
  });
  return html`<${Dialog} title="Add a member" onClose=${onClose}
    description="The person needs an account first: an operator makes it with interchange users create.">
    <form onSubmit=${onSubmit} class="form">
      <${Field} label="Email" hint="The email of their account, in any case.">
        ${(a) => html`<input ...${a} type="email" required maxlength="320" autocomplete="off" spellcheck=${false}
          placeholder="ada@example.com" value=${email} onInput=${(e) => setEmail(e.currentTarget.value)} />`}
      <//>
      <${RoleField} role=${role} value=${chosen} onChange=${setChosen} />
      <${FormFooter} error=${error} failedTitle="The member was not added" busy=${busy} label="Add member"
        busyLabel="Adding…" onCancel=${onClose} />
    </form>
  <//>`;
}

export function ChangeRoleDialog({ tenant, role, member, onClose, onChanged }) {
  const [chosen, setChosen] = useState(member.role);
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(async () => onChanged(await changeRole(tenant, member.user.id, chosen)), { keepBusyOnSuccess: true });
  return html`<${Dialog} title=${`Change the role of ${member.user.name || member.user.email}`} onClose=${onClose}>
    <form onSubmit=${onSubmit} class="form">
      <p class="dialog__text">${member.user.email} is <strong>${member.role}</strong> here now.</p>
      <${RoleField} role=${role} value=${chosen} onChange=${setChosen} />
      <${FormFooter} error=${error} failedTitle="The role was not changed" busy=${busy} disabled=${chosen === member.role}
        label="Change role" busyLabel="Changing…" onCancel=${onClose} />
    </form>
  <//>`;
}

export function RemoveMemberDialog({ tenant, member, isMe, onClose, onRemoved }) {
  const {
    busy,
    error,
    run: onConfirm,
  } = useAction(
    async () => {
      await removeMember(tenant, member.user.id);
      onRemoved(member);
    },
    { keepBusyOnSuccess: true },
  );
  return html`<${ConfirmDialog}
    title=${isMe ? 'Leave this tenant?' : 'Remove this member?'}
    confirmLabel=${isMe ? 'Leave tenant' : 'Remove member'}
    busy=${busy}
    onConfirm=${onConfirm}
    onClose=${onClose}
    error=${error && html`<${ErrorNotice} title="The member was not removed" error=${error} />`}
  >
    <p>
      ${isMe ? 'You' : html`<strong>${member.user.email}</strong>`} will no longer reach <code>${tenant}</code>, at once:
      keys and integrations stay as they are. An owner or admin can add ${isMe ? 'you' : 'them'} again.
    </p>
  <//>`;
}
