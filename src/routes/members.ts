import type { FastifyInstance } from 'fastify';
import { requestSource } from '../audit/audit-log.ts';
import { caller } from '../auth/authenticate.ts';
import { addMember, changeMemberRole, removeMember } from '../auth/members.ts';
import type { AppContext } from '../context.ts';
import { ok, okList } from '../http/envelope.ts';
import { listMembers, type Role, roles } from '../storage/users.ts';
import { bodyFailures, failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Members'];
const memberParams = idParams('user_id');
const role = { type: 'string', enum: roles } as const;

const addBody = {
  type: 'object',
  required: ['email', 'role'],
  additionalProperties: false,
  properties: { email: { type: 'string', minLength: 1, maxLength: 320 }, role },
  examples: [{ email: 'ada@example.com', role: 'developer' }],
} as const;

const roleBody = {
  type: 'object',
  required: ['role'],
  additionalProperties: false,
  properties: { role },
  examples: [{ role: 'viewer' }],
} as const;

const ownersOnly = {
  403: 'The caller lacks `*` (`insufficient_scope`, `details.required_scope`), or the change touches an owner (makes one, or changes or removes one) and the caller is not a person who is an owner here (`insufficient_scope`, `details.required_role: "owner"`).',
} as const;
const noSuchMember = { 404: '`not_found`: the user is not a member of this tenant.' } as const;
const lastOwner = { 409: '`conflict`: the member is the tenant’s last owner.' } as const;

/**
 * A tenant's members (docs/api.md#endpoints-members): anyone of the tenant lists them; owners and admins (and keys with
 * `*`) add, change and remove them, each change written with its audit event (src/auth/members.ts). After a change
 * this instance forgets what it knew of that person's role here, so it holds from their next request.
 */
export function registerMemberRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.storage.db;

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/members',
    {
      config: { scope: 'any' },
      schema: {
        tags,
        security,
        operationId: 'listMembers',
        summary: "List this tenant's members and their roles.",
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: reply('MemberListReply', 'A page of members, by user id.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      const page = await listMembers(db, caller(request).tenantId, request.query);
      return okList(page.items, page.nextCursor);
    },
  );

  app.post<{ Body: { email: string; role: Role } }>(
    '/api/v1/members',
    {
      config: { scope: '*' },
      schema: {
        tags,
        security,
        operationId: 'addMember',
        summary: 'Add a person (an account made with `interchange users create`) to this tenant with a role.',
        body: addBody,
        response: {
          201: reply('MemberReply', 'The new member.'),
          ...failures([...tenantFailures, ...bodyFailures, 404, 409], {
            ...ownersOnly,
            404: '`not_found`: no account has this email; an operator makes one with `interchange users create`.',
            409: '`conflict`: the person is a member already (`details.user_id`); change their role instead.',
          }),
        },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const member = await addMember(db, auth.tenantId, request.body, auth, requestSource(request));
      ctx.people.forgetMembership(member.user.id, auth.tenantId);
      return reply.code(201).send(ok(member));
    },
  );

  app.patch<{ Params: { user_id: string }; Body: { role: Role } }>(
    '/api/v1/members/:user_id',
    {
      config: { scope: '*' },
      schema: {
        tags,
        security,
        operationId: 'changeMemberRole',
        summary: "Change a member's role.",
        params: memberParams,
        body: roleBody,
        response: {
          200: reply('MemberReply', 'The member with their role now.'),
          ...failures([...tenantFailures, ...bodyFailures, 404, 409], { ...ownersOnly, ...noSuchMember, ...lastOwner }),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const { user_id: userId } = request.params;
      const member = await changeMemberRole(db, auth.tenantId, userId, request.body.role, auth, requestSource(request));
      ctx.people.forgetMembership(userId, auth.tenantId);
      return ok(member);
    },
  );

  app.delete<{ Params: { user_id: string } }>(
    '/api/v1/members/:user_id',
    {
      config: { scope: '*' },
      schema: {
        tags,
        security,
        operationId: 'removeMember',
        summary: 'Remove a member from this tenant: their access tokens stop working here.',
        params: memberParams,
        response: {
          200: reply('RemovedMemberReply', 'The member is removed.'),
          ...failures([...tenantFailures, 404, 409], { ...ownersOnly, ...noSuchMember, ...lastOwner }),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const { user_id: userId } = request.params;
      await removeMember(db, auth.tenantId, userId, auth, requestSource(request));
      ctx.people.forgetMembership(userId, auth.tenantId);
      return ok({ user_id: userId, removed: true });
    },
  );
}
