import { randomBytes } from 'node:crypto';
import { llmProfilesRepository, type LlmBindingRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';

/** A fresh secrets master key (base64 of 32 bytes) for `APP_SECRETS_MASTER_KEY`. */
export const newMasterKey = () => randomBytes(32).toString('base64');

/** A plain API key that is easy to look for in bodies, logs and rows. */
export const plainKey = (label = 'key') => `sk-${label}-${randomBytes(12).toString('hex')}`;

export interface ProfileJson {
  id: string;
  preset_name: string;
  provider: string;
  model_id: string;
  base_url: string | null;
  api_key_name: string | null;
  api_key_masked: string;
  status: 'active' | 'disabled' | 'deleted';
  last_used_at: number | null;
  created_at: number;
  updated_at: number;
}

let seq = 0;

/** Creates a profile through `POST /llm-profiles` and expects 201. */
export async function createProfile(
  t: TestApp,
  apiKey: string,
  body: Record<string, unknown> = {},
): Promise<ProfileJson> {
  seq += 1;
  const res = await t.http
    .post('/llm-profiles')
    .set('x-api-key', apiKey)
    .send({
      preset_name: `Profile ${seq}-${randomBytes(3).toString('hex')}`,
      provider: 'openai',
      model_id: `model-${seq}`,
      api_key: plainKey(`p${seq}`),
      ...body,
    });
  if (res.status !== 201)
    throw new Error(`POST /llm-profiles answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Binds a profile through `POST /llm-profiles/:id/activate` and expects 200. */
export async function activateProfile(
  t: TestApp,
  apiKey: string,
  profileId: string,
  body: Record<string, unknown> = {},
): Promise<{ profile_id: string; scope: string; scope_id: string; instance_slot: string; params: unknown }> {
  const res = await t.http.post(`/llm-profiles/${profileId}/activate`).set('x-api-key', apiKey).send(body);
  if (res.status !== 200)
    throw new Error(
      `POST /llm-profiles/${profileId}/activate answered ${res.status}: ${JSON.stringify(res.body)}`,
    );
  return res.body.data;
}

/** Replaces a stored ciphertext with one that does not authenticate (a tampered row). */
export async function tamperProfileKey(t: TestApp, profileId: string): Promise<void> {
  const db = t.resources.database.db;
  const row = await db
    .selectFrom('llm_profiles')
    .select('api_key_ciphertext')
    .where('id', '=', profileId)
    .executeTakeFirstOrThrow();
  const parts = row.api_key_ciphertext.split('.');
  const data = Buffer.from(parts[4], 'base64url');
  data[0] ^= 0xff;
  parts[4] = data.toString('base64url');
  await llmProfilesRepository.update(db, profileId, { api_key_ciphertext: parts.join('.') });
}

/** The stored profile row (ciphertext included). */
export const profileRow = (t: TestApp, id: string) =>
  t.resources.database.db
    .selectFrom('llm_profiles')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** Every binding of an account. */
export const accountBindings = (t: TestApp, accountId: string): Promise<LlmBindingRow[]> =>
  t.resources.database.db
    .selectFrom('llm_profile_bindings')
    .selectAll()
    .where('account_id', '=', accountId)
    .execute();

/** Every binding naming a session (global bindings excluded). */
export const sessionBindings = (t: TestApp, sessionId: string): Promise<LlmBindingRow[]> =>
  t.resources.database.db
    .selectFrom('llm_profile_bindings')
    .selectAll()
    .where('session_id', '=', sessionId)
    .execute();

/** Every operation log row of an account, oldest first. */
export const accountLogRows = (t: TestApp, accountId: string) =>
  t.resources.database.db
    .selectFrom('operation_logs')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

/** Every llm_profiles row of an account (all statuses). */
export const accountProfileRows = (t: TestApp, accountId: string) =>
  t.resources.database.db
    .selectFrom('llm_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .execute();
