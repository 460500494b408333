import { randomBytes } from 'node:crypto';
import { llmProfileSecretsRepository, type LlmProfileRow } from '@hearth/persistence';
import {
  loadConfig,
  rotateSecrets,
  runRotateSecretsCommand,
  SecretBox,
  SecretFormatError,
  secretKeyId,
} from '@hearth/platform';
import { createAccountWithKey } from '../support/factories/accounts';
import { createLlmProfile } from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Rotating the secrets master key (issue 6 item 2): every `llm_profiles.api_key_ciphertext` is
 * re-encrypted under the current key in batches, one transaction per batch, through the command the
 * README documents (`main.js --rotate-secrets`), on a real Postgres.
 */
describe('secrets rotation', () => {
  let t: TestApp;
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const oldBox = new SecretBox(oldKey);
  const rotatingBox = new SecretBox(newKey, [oldKey]);
  const newOnlyBox = new SecretBox(newKey);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.resources.database.db;

  /** A profile whose stored key is `plaintext` encrypted by `box`. */
  async function profileWithKey(
    accountId: string,
    box: SecretBox,
    plaintext: string,
    status: LlmProfileRow['status'] = 'active',
  ): Promise<{ id: string; plaintext: string; ciphertext: string }> {
    const row = await createLlmProfile(t, accountId, { status });
    const ciphertext = box.encrypt(plaintext);
    expect(
      await llmProfileSecretsRepository.replaceCiphertext(db(), row.id, row.api_key_ciphertext, ciphertext),
    ).toBe(true);
    return { id: row.id, plaintext, ciphertext };
  }

  const stored = async (id: string) => {
    const ciphertext = await llmProfileSecretsRepository.findCiphertext(db(), id);
    if (ciphertext === undefined) throw new Error(`profile ${id} is gone`);
    return ciphertext;
  };

  const commandConfig = (env: Record<string, string>) =>
    loadConfig({ DATABASE_URL: t.database!.url, ...env });

  async function runCommand(env: Record<string, string>, args: string[] = []) {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runRotateSecretsCommand(commandConfig(env), args, {
      stdout: (line) => stdout.push(line),
      stderr: (line) => stderr.push(line),
    });
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  }

  it('re-encrypts every profile of every account and status in batches; old ciphertexts stop decrypting once the old key is gone', async () => {
    const other = await createAccountWithKey(t);
    const profiles = [
      await profileWithKey('default', oldBox, 'sk-old-aaaaaaaaaaaaaaaa-1'),
      await profileWithKey('default', oldBox, 'sk-old-bbbbbbbbbbbbbbbb-2', 'disabled'),
      await profileWithKey('default', oldBox, 'sk-old-cccccccccccccccc-3', 'deleted'),
      await profileWithKey(other.accountId, oldBox, 'sk-old-dddddddddddddddd-4'),
      await profileWithKey(other.accountId, oldBox, 'sk-old-eeeeeeeeeeeeeeee-5'),
    ];
    const alreadyNew = await profileWithKey(other.accountId, newOnlyBox, 'sk-new-ffffffffffffffff-6');

    const run = await runCommand(
      {
        APP_SECRETS_MASTER_KEY: newKey.toString('base64'),
        APP_SECRETS_PREVIOUS_MASTER_KEYS: oldKey.toString('base64'),
      },
      ['--batch-size', '4'],
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`under key ${secretKeyId(newKey)}`);
    expect(run.stdout).toContain('  4 scanned: 4 re-encrypted, 0 already current, 0 unreadable');
    expect(run.stdout).toContain('Done: 6 profile(s), 5 re-encrypted, 1 already current, 0 unreadable');
    for (const p of [...profiles, alreadyNew]) {
      expect(run.stdout).not.toContain(p.plaintext);
      expect(run.stdout).not.toContain(p.ciphertext);
    }

    for (const p of profiles) {
      const now = await stored(p.id);
      expect(now).not.toBe(p.ciphertext);
      expect(newOnlyBox.keyIdOf(now)).toBe(secretKeyId(newKey));
      // The new master key alone reads every rotated key ...
      expect(newOnlyBox.decrypt(now)).toBe(p.plaintext);
      // ... and no longer the old ciphertexts, once the previous key is removed.
      expect(() => newOnlyBox.decrypt(p.ciphertext)).toThrow(SecretFormatError);
    }
    // Already under the current key: untouched.
    expect(await stored(alreadyNew.id)).toBe(alreadyNew.ciphertext);

    // A second run finds nothing to do.
    const again = await rotateSecrets(db(), rotatingBox, { batchSize: 2 });
    expect(again).toMatchObject({ scanned: 6, rotated: 0, current: 6, failed: 0, batches: 3 });
  });

  it('leaves a batch unchanged when a write in it fails, keeps earlier batches, and a re-run finishes', async () => {
    await t.close();
    t = await startTestApp();
    const profiles = [];
    for (let i = 0; i < 5; i++)
      profiles.push(await profileWithKey('default', oldBox, `sk-batch-key-${i}-0123456789`));
    const sorted = [...profiles].sort((a, b) => (a.id < b.id ? -1 : 1));

    /** Fails on its 4th encryption: the second row of the second batch (batches of 3). */
    class FailingBox extends SecretBox {
      private calls = 0;
      override encrypt(plaintext: string): string {
        if (++this.calls === 4) throw new Error('disk on fire');
        return super.encrypt(plaintext);
      }
    }
    await expect(rotateSecrets(db(), new FailingBox(newKey, [oldKey]), { batchSize: 3 })).rejects.toThrow(
      'disk on fire',
    );
    for (const [index, p] of sorted.entries()) {
      const now = await stored(p.id);
      if (index < 3) expect(newOnlyBox.decrypt(now)).toBe(p.plaintext);
      else expect(now).toBe(p.ciphertext);
    }

    const report = await rotateSecrets(db(), rotatingBox, { batchSize: 3 });
    expect(report).toMatchObject({ scanned: 5, rotated: 2, current: 3, failed: 0, batches: 2 });
    for (const p of profiles) expect(newOnlyBox.decrypt(await stored(p.id))).toBe(p.plaintext);
  });

  it('counts and names (by id only) the keys no configured key can read, leaves them, and exits 1', async () => {
    await t.close();
    t = await startTestApp();
    const readable = await profileWithKey('default', oldBox, 'sk-readable-0123456789abcdef');
    const foreign = await profileWithKey(
      'default',
      new SecretBox(randomBytes(32)),
      'sk-foreign-0123456789abcdef',
    );
    // The settings factory's placeholder is not a ciphertext at all.
    const placeholder = await createLlmProfile(t, 'default');

    const run = await runCommand({
      APP_SECRETS_MASTER_KEY: newKey.toString('base64'),
      APP_SECRETS_PREVIOUS_MASTER_KEYS: oldKey.toString('base64'),
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Done: 3 profile(s), 1 re-encrypted, 0 already current, 2 unreadable');
    expect(run.stderr).toContain(foreign.id);
    expect(run.stderr).toContain(placeholder.id);
    expect(run.stderr).not.toContain(readable.id);
    expect(run.stderr).not.toContain(foreign.ciphertext);
    expect(await stored(foreign.id)).toBe(foreign.ciphertext);
    expect(await stored(placeholder.id)).toBe(placeholder.api_key_ciphertext);
    expect(newOnlyBox.decrypt(await stored(readable.id))).toBe(readable.plaintext);
  });

  it('refuses to run without a master key or with a bad batch size (exit 2), changing nothing', async () => {
    const p = await profileWithKey('default', oldBox, 'sk-untouched-0123456789abcdef');
    const noKey = await runCommand({});
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('APP_SECRETS_MASTER_KEY is not set');
    for (const args of [
      ['--batch-size', '0'],
      ['--batch-size=abc'],
      ['--batch-size'],
      ['--batch-size=10001'],
    ]) {
      const bad = await runCommand({ APP_SECRETS_MASTER_KEY: newKey.toString('base64') }, args);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--batch-size must be an integer between 1 and 10000');
    }
    expect(await stored(p.id)).toBe(p.ciphertext);
    await expect(rotateSecrets(db(), new SecretBox(null))).rejects.toMatchObject({
      code: 'secret_unavailable',
      status: 503,
    });
  });

  it('accepts the batch size limits 1 and 10000', async () => {
    const env = {
      APP_SECRETS_MASTER_KEY: newKey.toString('base64'),
      APP_SECRETS_PREVIOUS_MASTER_KEYS: oldKey.toString('base64'),
    };
    const one = await runCommand(env, ['--batch-size=1']);
    const max = await runCommand(env, ['--batch-size', '10000']);
    expect(one.stdout).toContain('batches of 1');
    expect(max.stdout).toContain('batches of 10000');
    // The previous test's profile is rotated by the first run; the unreadable ones of the test before stay.
    expect(one.stdout).toMatch(/Done: 4 profile\(s\), 1 re-encrypted/);
    expect(max.stdout).toMatch(/Done: 4 profile\(s\), 0 re-encrypted, 2 already current, 2 unreadable/);
  });
});
