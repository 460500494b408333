import { randomBytes } from 'node:crypto';
import { DomainError } from '@hearth/domain';
import { maskSecret, SecretBox, SecretFormatError, secretKeyId } from './secret-box';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const PLAIN = 'sk-live-0123456789abcdefghijklmnop';

function problemOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (error) {
    if (error instanceof SecretFormatError) return error.problem;
    throw error;
  }
  return null;
}

/** Replaces one base64url character of part `index` (2 iv, 3 tag, 4 data) by another. */
function flip(ciphertext: string, index: number): string {
  const parts = ciphertext.split('.');
  const part = parts[index];
  const c = part[0] === 'A' ? 'B' : 'A';
  parts[index] = c + part.slice(1);
  return parts.join('.');
}

describe('SecretBox', () => {
  it('round-trips text, with the key id in the ciphertext and a fresh IV each time', () => {
    const box = new SecretBox(keyA);
    const one = box.encrypt(PLAIN);
    const two = box.encrypt(PLAIN);
    expect(one).not.toBe(two);
    expect(one).not.toContain(PLAIN);
    const [version, kid, iv, tag] = one.split('.');
    expect(version).toBe('v1');
    expect(kid).toBe(secretKeyId(keyA));
    expect(kid).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag, 'base64url')).toHaveLength(16);
    expect(box.decrypt(one)).toBe(PLAIN);
    expect(box.decrypt(two)).toBe(PLAIN);
    expect(box.decrypt(box.encrypt(''))).toBe('');
    expect(box.decrypt(box.encrypt('ключ 🔑'))).toBe('ключ 🔑');
  });

  it('detects tampering with the IV, the tag, the data or the key id', () => {
    const box = new SecretBox(keyA);
    const ciphertext = box.encrypt(PLAIN);
    for (const index of [2, 3, 4])
      expect(problemOf(() => box.decrypt(flip(ciphertext, index)))).toBe('not_authentic');
    // A truncated tag is refused, not checked against fewer bytes.
    const parts = ciphertext.split('.');
    const shortTag = [
      ...parts.slice(0, 3),
      Buffer.from(parts[3], 'base64url').subarray(0, 12).toString('base64url'),
      parts[4],
    ];
    expect(problemOf(() => box.decrypt(shortTag.join('.')))).toBe('malformed');
    // The key id is authenticated: relabelling a ciphertext with another configured key's id fails.
    const both = new SecretBox(keyA, [keyB]);
    const relabelled = [parts[0], secretKeyId(keyB), ...parts.slice(2)].join('.');
    expect(problemOf(() => both.decrypt(relabelled))).toBe('not_authentic');
  });

  it('refuses what does not parse', () => {
    const box = new SecretBox(keyA);
    const good = box.encrypt(PLAIN).split('.');
    for (const bad of [
      '',
      'factory:not-a-real-ciphertext',
      PLAIN,
      good.slice(0, 4).join('.'),
      [...good, 'extra'].join('.'),
      ['v2', ...good.slice(1)].join('.'),
      [good[0], 'ABCDEFGH', ...good.slice(2)].join('.'),
      [good[0], good[1], good[2] + '!', ...good.slice(3)].join('.'),
      [good[0], good[1], 'AAAA', ...good.slice(3)].join('.'),
    ]) {
      expect(problemOf(() => box.decrypt(bad))).toBe('malformed');
    }
  });

  it('refuses a ciphertext whose key id is not configured', () => {
    const other = new SecretBox(keyB).encrypt(PLAIN);
    const error = (() => {
      try {
        new SecretBox(keyA).decrypt(other);
      } catch (e) {
        return e as SecretFormatError;
      }
      throw new Error('expected a failure');
    })();
    expect(error).toBeInstanceOf(SecretFormatError);
    expect(error.problem).toBe('unknown_key');
    expect(error.message).toContain(secretKeyId(keyB));
    expect(error.message).not.toContain(PLAIN);
  });

  it('answers 503 secret_unavailable without a master key', () => {
    const box = new SecretBox(null);
    expect(box.available).toBe(false);
    expect(box.currentKeyId).toBeNull();
    for (const fn of [() => box.encrypt(PLAIN), () => box.decrypt(new SecretBox(keyA).encrypt(PLAIN))]) {
      try {
        fn();
        throw new Error('expected a failure');
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect(error).toMatchObject({ code: 'secret_unavailable', status: 503 });
      }
    }
  });

  it('rotates: previous keys decrypt, encrypt uses the current key, removing the old key ends it', () => {
    const old = new SecretBox(keyA).encrypt(PLAIN);
    const rotating = SecretBox.fromConfig({ secretsMasterKey: keyB, secretsPreviousMasterKeys: [keyA] });
    expect(rotating.currentKeyId).toBe(secretKeyId(keyB));
    expect(rotating.isCurrent(old)).toBe(false);
    expect(rotating.decrypt(old)).toBe(PLAIN);
    const renewed = rotating.encrypt(rotating.decrypt(old));
    expect(rotating.keyIdOf(renewed)).toBe(secretKeyId(keyB));
    expect(rotating.isCurrent(renewed)).toBe(true);
    const after = SecretBox.fromConfig({ secretsMasterKey: keyB, secretsPreviousMasterKeys: [] });
    expect(after.decrypt(renewed)).toBe(PLAIN);
    expect(problemOf(() => after.decrypt(old))).toBe('unknown_key');
  });

  it('rejects master keys that are not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
    expect(() => new SecretBox(keyA, [randomBytes(31)])).toThrow(/32 bytes/);
  });

  it('keyIdOf reads the kid, null for garbage', () => {
    const box = new SecretBox(keyA);
    expect(box.keyIdOf(box.encrypt('x'))).toBe(secretKeyId(keyA));
    expect(box.keyIdOf('garbage')).toBeNull();
  });
});

describe('maskSecret', () => {
  it('shows the first 3 and last 4 characters of a long key', () => {
    expect(maskSecret('sk-abcdefghijklmnopqrstuvwxyz1234')).toBe('sk-...1234');
  });

  it('never shows more than 7 characters of the key', () => {
    for (const length of [16, 17, 20, 40, 200]) {
      const key = Array.from({ length }, (_, i) => String.fromCharCode(65 + (i % 26))).join('');
      const masked = maskSecret(key);
      const shown = masked.replace('...', '');
      expect(shown.length).toBeLessThanOrEqual(7);
      expect(key.startsWith(shown.slice(0, 3))).toBe(true);
      expect(key.endsWith(shown.slice(3))).toBe(true);
    }
  });

  it('masks keys under 16 characters completely (limit 15 and 16)', () => {
    expect(maskSecret('')).toBe('****');
    expect(maskSecret('short')).toBe('****');
    expect(maskSecret('a'.repeat(15))).toBe('****');
    expect(maskSecret('abcdefghijklmnop')).toBe('abc...mnop');
  });
});
