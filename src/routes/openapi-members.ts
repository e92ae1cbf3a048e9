import { roles } from '../storage/users.ts';
import { envelope, listEnvelope, succeeded, timestamp } from './openapi-envelopes.ts';
import { exact, ref } from './schemas.ts';

/** A tenant's members in the OpenAPI document (docs/api.md#endpoints-members). */

const memberExample = {
  user: { id: 'usr_01jd8x2m4q7v9c3b5n6p8r0t2w', email: 'ada@example.com', name: 'Ada' },
  role: 'developer',
  created_at: '2026-11-21T09:30:00.000Z',
};

const member = {
  $id: 'Member',
  description: 'A person and their role in this tenant.',
  ...exact({
    user: exact({ id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } }),
    role: { type: 'string', enum: roles },
    created_at: { ...timestamp, description: 'When the person became a member (a later change of role keeps it).' },
  }),
  examples: [memberExample],
};

const removedMember = {
  $id: 'RemovedMember',
  ...exact({ user_id: { type: 'string' }, removed: succeeded }),
  examples: [{ user_id: memberExample.user.id, removed: true }],
};

/** What src/routes/openapi.ts registers for the members routes. */
export const memberSchemas = [
  member,
  removedMember,
  envelope('MemberReply', ref('Member'), 'One member.'),
  listEnvelope('MemberListReply', 'Member', "A page of the tenant's members."),
  envelope('RemovedMemberReply', ref('RemovedMember'), 'The member is removed.'),
];
