import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { type AuditSource, inTransaction, recordForTenants } from '../audit/audit-log.ts';
import { newId, nowIso } from '../core/ids.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import type { Db } from '../storage/database.ts';
import {
  currentSigningKey,
  insertSigningKey,
  replaceSigningKeys,
  type StoredSigningKey,
  verifyingKeys,
} from '../storage/signing-keys.ts';
import { listTenants } from '../storage/tenants.ts';

/** The one algorithm access tokens are signed and verified with: Ed25519. */
export const signingAlgorithm = 'EdDSA';

/**
 * A retired key keeps verifying for longer than any access token it signed can live (IX_ACCESS_TOKEN_TTL_SECONDS is at
 * most an hour), so a rotation logs no one out; the JWKS lists it as long.
 */
export const retiredKeyGraceSeconds = 3600 + 300;

/** How long an instance signs with the key it read before it reads again (a rotation elsewhere is picked up then). */
const currentKeyTtlMs = 60_000;
/** How long the verifying keys are trusted before they are read again; an unknown kid reads them at once. */
const verifyingKeysTtlMs = 60_000;
/** An unknown kid reads storage at most this often, so a flood of made-up kids costs one read per interval. */
const unknownKidReadMs = 1000;

/** A public key as the JWKS lists it. */
export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: string;
  use: 'sig';
}

const context = (kid: string) => `signing-key:${kid}`;

function newKey(masterKey: Buffer): StoredSigningKey {
  const kid = newId('sig');
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk: PublicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: signingAlgorithm, use: 'sig' };
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    kid,
    algorithm: signingAlgorithm,
    public_jwk: JSON.stringify(jwk),
    private_key: encryptSecret(masterKey, pem, context(kid)),
    created_at: nowIso(),
    retired_at: null,
  };
}

/**
 * The keys that sign access tokens, kept in storage so that every instance signs with one and verifies the others'.
 * The first key is generated on first need; private keys are stored sealed with the master key.
 *
 * @example
 * const keys = new SigningKeys(db, masterKey);
 * const { kid, key } = await keys.signing();
 * const publicKey = await keys.verifying(kid);
 */
export class SigningKeys {
  readonly #db: Db;
  readonly #masterKey: Buffer;
  #current: { kid: string; key: KeyObject; readAt: number } | undefined;
  #verifying = new Map<string, KeyObject>();
  #verifyingReadAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(db: Db, masterKey: Buffer) {
    this.#db = db;
    this.#masterKey = masterKey;
  }

  /** The key to sign with now, created when there is none. */
  async signing(): Promise<{ kid: string; key: KeyObject }> {
    if (this.#current && Date.now() - this.#current.readAt < currentKeyTtlMs) return this.#current;
    let stored = await currentSigningKey(this.#db);
    if (!stored) {
      // Two instances may both create one at once: both keys verify, and every instance then signs with the newest.
      await insertSigningKey(this.#db, newKey(this.#masterKey));
      stored = (await currentSigningKey(this.#db)) as StoredSigningKey;
    }
    const pem = decryptSecret(this.#masterKey, stored.private_key, context(stored.kid));
    this.#current = { kid: stored.kid, key: createPrivateKey(pem), readAt: Date.now() };
    return this.#current;
  }

  /** The public key of `kid` if it still verifies (current, or retired within the grace); undefined otherwise. */
  async verifying(kid: string): Promise<KeyObject | undefined> {
    const age = Date.now() - this.#verifyingReadAt;
    if (age >= verifyingKeysTtlMs || (!this.#verifying.has(kid) && age >= unknownKidReadMs)) await this.#read();
    return this.#verifying.get(kid);
  }

  /** The JWKS document: every public key that still verifies, newest first. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const stored = await verifyingKeys(this.#db, this.#graceStart());
    return { keys: stored.map((k) => JSON.parse(k.public_jwk) as PublicJwk) };
  }

  /**
   * Starts signing with a new key and retires the others; tokens they signed keep verifying until they expire. Other
   * instances sign with the new key within a minute and verify it at once (an unknown kid makes them read storage).
   * Every tenant's audit log records it: the key signs every person's tokens.
   */
  async rotate(source: AuditSource): Promise<string> {
    const next = newKey(this.#masterKey);
    await inTransaction(this.#db, async (tx) => {
      await replaceSigningKeys(tx, next, nowIso());
      const tenants = await listTenants(tx);
      await recordForTenants(
        tx,
        tenants.map((t) => t.id),
        source,
        { action: 'signing_key.rotated', target: { type: 'signing_key', id: next.kid } },
      );
    });
    this.#current = undefined;
    this.#verifyingReadAt = Number.NEGATIVE_INFINITY;
    return next.kid;
  }

  #graceStart(): string {
    return new Date(Date.now() - retiredKeyGraceSeconds * 1000).toISOString();
  }

  /** Reads the verifying keys; concurrent callers share one read. */
  #read(): Promise<void> {
    this.#reading ??= (async () => {
      try {
        const stored = await verifyingKeys(this.#db, this.#graceStart());
        this.#verifying = new Map(stored.map((k) => [k.kid, createPublicKey({ key: JSON.parse(k.public_jwk), format: 'jwk' })]));
        this.#verifyingReadAt = Date.now();
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }
}
