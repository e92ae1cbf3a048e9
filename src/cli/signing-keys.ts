import { parseArgs } from 'node:util';
import { cliSource } from '../audit/audit-log.ts';
import { retiredKeyGraceSeconds, SigningKeys } from '../auth/signing-keys.ts';
import { loadMasterKey } from '../secrets/master-key.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, UsageError } from './io.ts';
import { withStorage } from './storage.ts';

const actions = {
  rotate: `usage: interchange signing-keys rotate

  Starts signing access tokens with a new key and retires the others. Nobody is signed out: tokens the old keys
  signed keep verifying for ${Math.round(retiredKeyGraceSeconds / 60)} minutes, longer than any access token lives. Running instances sign with the new
  key within a minute and accept it at once. The private key is stored encrypted with the master key.`,
};

/** `interchange signing-keys --help`. */
export const signingKeysUsage = groupUsage('signing-keys', actions);

/** `signing-keys rotate` on DATABASE_URL, with the master key the server uses. */
export async function signingKeysCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, signingKeysUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  if (action !== 'rotate') throw new UsageError(action ? `unknown action signing-keys ${action}` : signingKeysUsage);
  const { values } = parseArgs({ args: rest, options: { json } });
  const kid = await withStorage(io, async (storage, _limit, config) => {
    const keys = new SigningKeys(storage.db, loadMasterKey(config, storage).key);
    return keys.rotate(cliSource());
  });
  io.out(
    values.json
      ? JSON.stringify({ kid })
      : `signing with the new key ${kid}; the old ones verify for ${Math.round(retiredKeyGraceSeconds / 60)} more minutes`,
  );
  return 0;
}
