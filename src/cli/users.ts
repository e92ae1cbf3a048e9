import { parseArgs } from 'node:util';
import { cliSource } from '../audit/audit-log.ts';
import { minPasswordLength } from '../auth/passwords.ts';
import { createUser, grantRole, revokeRole } from '../auth/user-service.ts';
import { listUsers, membershipsOf, roles } from '../storage/users.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { withStorage } from './storage.ts';

const actions = {
  create: `usage: interchange users create <email> [--name N] --password-stdin

  Creates a person who signs in with email and password. The password (at least ${minPasswordLength} characters)
  is read from standard input, one line, so it never shows in the process list or the shell history:
    printf '%s\\n' "$PASSWORD" | interchange users create ada@example.com --name Ada --password-stdin`,
  list: `usage: interchange users list

  Every user: id, email, name, and their role in each tenant.`,
  grant: `usage: interchange users grant <email> --tenant T --role ${roles.join('|')}

  Gives the user a role in the tenant (replacing the one they had there). owner and admin may do everything;
  developer manages integrations and entities and reads executions and keys; viewer reads.`,
  revoke: `usage: interchange users revoke <email> --tenant T

  Removes the user's role in the tenant: running servers refuse their access tokens there within 1 s.`,
};

/** `interchange users --help`. */
export const usersUsage = groupUsage('users', actions);

/** Standard input, whole: the password, with one line ending removed. */
async function readPassword(stdin: CliIo['stdin']): Promise<string> {
  if (stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input: pipe it in');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function oneEmail(positionals: string[], action: keyof typeof actions): string {
  if (positionals.length !== 1) throw new UsageError(actions[action].split('\n')[0]);
  return positionals[0];
}

/** `users create|list|grant|revoke` on DATABASE_URL. */
export async function usersCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, usersUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  switch (action) {
    case 'create': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { name: { type: 'string' }, 'password-stdin': { type: 'boolean', default: false }, json },
      });
      const email = oneEmail(positionals, 'create');
      if (!values['password-stdin']) {
        throw new UsageError('--password-stdin is required: the password is read from standard input, never from an argument');
      }
      const password = await readPassword(io.stdin);
      if (password.length < minPasswordLength) {
        throw new UsageError(`the password must be at least ${minPasswordLength} characters`);
      }
      const user = await withStorage(io, (s) => createUser(s.db, { email, name: values.name, password }, cliSource()));
      io.out(values.json ? JSON.stringify(user) : `${user.id}\t${user.email}\t${user.name}`);
      return 0;
    }
    case 'list': {
      const { values } = parseArgs({ args: rest, options: { json } });
      const users = await withStorage(io, async (s) =>
        Promise.all((await listUsers(s.db)).map(async (u) => ({ ...u, memberships: await membershipsOf(s.db, u.id) }))),
      );
      if (values.json) io.out(JSON.stringify({ data: users }));
      else {
        const rows = users.map((u) => [u.id, u.email, u.name, u.memberships.map((m) => `${m.tenant_id}:${m.role}`).join(',')]);
        io.out(table(['ID', 'EMAIL', 'NAME', 'ROLES'], rows));
      }
      return 0;
    }
    case 'grant': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { tenant: { type: 'string' }, role: { type: 'string' }, json },
      });
      const email = oneEmail(positionals, 'grant');
      if (!values.tenant) throw new UsageError('--tenant is required');
      if (!values.role || !(roles as readonly string[]).includes(values.role)) {
        throw new UsageError(`--role must be one of ${roles.join(', ')}`);
      }
      const { tenant, role } = values;
      const granted = await withStorage(io, (s) => grantRole(s.db, email, tenant, role, cliSource()));
      io.out(values.json ? JSON.stringify(granted) : `${granted.user.email} is ${granted.role} in ${granted.tenant_id}`);
      return 0;
    }
    case 'revoke': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { tenant: { type: 'string' }, json },
      });
      const email = oneEmail(positionals, 'revoke');
      if (!values.tenant) throw new UsageError('--tenant is required');
      const { tenant } = values;
      const revoked = await withStorage(io, (s) => revokeRole(s.db, email, tenant, cliSource()));
      io.out(values.json ? JSON.stringify(revoked) : `${revoked.user.email} has no role in ${revoked.tenant_id} any more`);
      return 0;
    }
    default:
      throw new UsageError(action === undefined ? 'an action is required' : `unknown action users ${action}`, usersUsage);
  }
}
