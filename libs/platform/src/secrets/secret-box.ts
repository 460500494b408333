import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { DomainError } from '@hearth/domain';

/**
 * Model API keys at rest (ARCHITECTURE.md "Secrets"): AES-256-GCM under the master key
 * `APP_SECRETS_MASTER_KEY`, a random 12-byte IV per encryption, and the id of the key inside every
 * ciphertext so the master key can be rotated:
 *
 *   v1.<kid>.<iv>.<tag>.<data>      (iv, tag, data in base64url; kid = 8 hex of sha256 of the key)
 *
 * The version and kid are authenticated too (GCM additional data). Previous master keys
 * (`APP_SECRETS_PREVIOUS_MASTER_KEYS`) only decrypt; `encrypt` always uses the current key. Plaintext
 * never appears in an error message.
 */

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const B64URL = /^[A-Za-z0-9_-]*$/;
const KID = /^[0-9a-f]{8}$/;

export type SecretFormatProblem = 'malformed' | 'unknown_key' | 'not_authentic';

/**
 * A stored ciphertext that cannot be read: it does not parse, its key id is not a configured key, or it
 * does not authenticate (tampered, or encrypted under another key). Callers map it to 500
 * `secret_invalid_format` where a key is read directly, and skip the binding at resolution.
 */
export class SecretFormatError extends Error {
  constructor(
    readonly problem: SecretFormatProblem,
    message: string,
  ) {
    super(message);
    this.name = 'SecretFormatError';
  }
}

export const secretUnavailable = () =>
  new DomainError(
    'secret_unavailable',
    503,
    'Storing or reading model API keys needs the server variable APP_SECRETS_MASTER_KEY',
  );

/** The key id of a master key: the first 8 hex characters of its sha256. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

interface ParsedCiphertext {
  kid: string;
  iv: Buffer;
  tag: Buffer;
  data: Buffer;
  aad: Buffer;
}

function parse(ciphertext: string): ParsedCiphertext {
  const parts = typeof ciphertext === 'string' ? ciphertext.split('.') : [];
  if (
    parts.length !== 5 ||
    parts[0] !== VERSION ||
    !KID.test(parts[1]) ||
    !parts.slice(2).every((p) => B64URL.test(p))
  )
    throw new SecretFormatError('malformed', 'The stored secret is not a v1 ciphertext');
  const [version, kid, iv, tag, data] = parts;
  const ivBytes = Buffer.from(iv, 'base64url');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES)
    throw new SecretFormatError('malformed', 'The stored secret has a wrong IV or tag length');
  return {
    kid,
    iv: ivBytes,
    tag: tagBytes,
    data: Buffer.from(data, 'base64url'),
    aad: Buffer.from(`${version}.${kid}`),
  };
}

export interface SecretKeys {
  /** 32 bytes, or null when secrets are unavailable. */
  secretsMasterKey: Buffer | null;
  /** Keys that were the master key before: decrypt only. */
  secretsPreviousMasterKeys?: Buffer[];
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKeyId: string | null;

  constructor(current: Buffer | null, previous: Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key && key.length !== KEY_BYTES) throw new Error(`A secrets master key must be ${KEY_BYTES} bytes`);
    }
    this.currentKeyId = current ? secretKeyId(current) : null;
    if (current) this.keys.set(this.currentKeyId!, current);
    for (const key of previous) {
      const kid = secretKeyId(key);
      if (!this.keys.has(kid)) this.keys.set(kid, key);
    }
  }

  static fromConfig(config: SecretKeys): SecretBox {
    return new SecretBox(config.secretsMasterKey, config.secretsPreviousMasterKeys ?? []);
  }

  /** Whether keys can be saved (a master key is configured). */
  get available(): boolean {
    return this.currentKeyId !== null;
  }

  /** Encrypts under the current master key; 503 `secret_unavailable` without one. */
  encrypt(plaintext: string): string {
    if (!this.currentKeyId) throw secretUnavailable();
    const key = this.keys.get(this.currentKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(`${VERSION}.${this.currentKeyId}`));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [
      VERSION,
      this.currentKeyId,
      iv.toString('base64url'),
      tag.toString('base64url'),
      data.toString('base64url'),
    ].join('.');
  }

  /**
   * Decrypts with the key whose id the ciphertext names. 503 `secret_unavailable` when no key at all is
   * configured; `SecretFormatError` when the ciphertext cannot be read.
   */
  decrypt(ciphertext: string): string {
    if (this.keys.size === 0) throw secretUnavailable();
    const parsed = parse(ciphertext);
    const key = this.keys.get(parsed.kid);
    if (!key)
      throw new SecretFormatError(
        'unknown_key',
        `The stored secret was encrypted under an unknown key (${parsed.kid})`,
      );
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(parsed.aad);
      decipher.setAuthTag(parsed.tag);
      return Buffer.concat([decipher.update(parsed.data), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretFormatError('not_authentic', 'The stored secret does not authenticate');
    }
  }

  /** The key id a ciphertext names, or null when it does not parse. */
  keyIdOf(ciphertext: string): string | null {
    try {
      return parse(ciphertext).kid;
    } catch {
      return null;
    }
  }

  /** Whether a ciphertext is under another key than the current one (rotation re-encrypts it). */
  isCurrent(ciphertext: string): boolean {
    return this.currentKeyId !== null && this.keyIdOf(ciphertext) === this.currentKeyId;
  }
}

/**
 * The masked form of an API key shown instead of it: the first 3 and last 4 characters (`sk-...abcd`),
 * never more than 7 characters of the key; keys under 16 characters are masked completely.
 */
export function maskSecret(secret: string): string {
  const chars = Array.from(secret);
  if (chars.length < 16) return '****';
  return `${chars.slice(0, 3).join('')}...${chars.slice(-4).join('')}`;
}
