import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestApp } from '../test-app';

/** Fixtures for presets and regex profiles: the copies of /work/shared/fixtures kept next to the codecs. */
const FIXTURES = join(__dirname, '../../../libs/domain/src/formats/__fixtures__');

export const presetFixtureNames = () =>
  readdirSync(join(FIXTURES, 'presets'))
    .filter((n) => n.endsWith('.json'))
    .sort();
export const regexFixtureNames = () =>
  readdirSync(join(FIXTURES, 'regex'))
    .filter((n) => n.endsWith('.json'))
    .sort();

/** The fixture's text as on disk. */
export const fixtureText = (kind: 'presets' | 'regex', name: string) =>
  readFileSync(join(FIXTURES, kind, name), 'utf8');

/** A small preset file with prompts, an order list, macros and a field ST does not know. */
export function presetFile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    chat_completion_source: 'openai',
    temperature: 0.8,
    openai_max_context: 8192,
    prompts: [
      {
        identifier: 'main',
        name: 'Main Prompt',
        role: 'system',
        content: 'You are {{char}}. Talk to {{user}}.',
      },
      { identifier: 'chatHistory', name: 'Chat History', marker: true, system_prompt: true },
    ],
    prompt_order: [
      {
        character_id: 100001,
        order: [
          { identifier: 'main', enabled: true },
          { identifier: 'chatHistory', enabled: true },
        ],
      },
    ],
    hearth_unknown_field: { nested: [1, 'two', null, true] },
    ...overrides,
  };
}

/** One regex script; fields may be overridden or removed with `undefined`. */
export function regexScript(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const script: Record<string, unknown> = {
    id: '0b7d2c1e-1111-4a2b-8c3d-123456789abc',
    scriptName: 'Trim stars',
    findRegex: '/\\*+/g',
    replaceString: '',
    trimStrings: [],
    placement: [2],
    disabled: false,
    markdownOnly: false,
    promptOnly: false,
    runOnEdit: false,
    substituteRegex: 0,
    minDepth: null,
    maxDepth: null,
    ...overrides,
  };
  for (const key of Object.keys(script)) if (script[key] === undefined) delete script[key];
  return script;
}

/** Imports a preset through the route; throws unless 201. */
export async function importPreset(
  t: TestApp,
  apiKey: string,
  body: { name?: string; data?: unknown } = {},
): Promise<{ id: string; name: string; latest_version_id: string; version_no: number }> {
  const res = await t.http
    .post('/import/preset')
    .set('x-api-key', apiKey)
    .send({ data: presetFile(), ...body });
  if (res.status !== 201) throw new Error(`import preset: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Imports a regex profile through the route; throws unless 201. */
export async function importRegexProfile(
  t: TestApp,
  apiKey: string,
  body: { name?: string; data?: unknown } = {},
): Promise<{ id: string; name: string; latest_version_id: string; version_no: number }> {
  const res = await t.http
    .post('/import/regex')
    .set('x-api-key', apiKey)
    .send({ data: [regexScript()], ...body });
  if (res.status !== 201) throw new Error(`import regex: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** What an account has stored for presets and regex profiles (to check that a failed write stored nothing). */
export async function presetRegexStorage(t: TestApp, accountId: string) {
  const db = t.resources.database.db;
  const count = async (q: Promise<{ n: string | number | bigint }>) => Number((await q).n);
  return {
    presets: await count(
      db
        .selectFrom('presets')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    ),
    regex_profiles: await count(
      db
        .selectFrom('regex_profiles')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    ),
    versions: await count(
      db
        .selectFrom('asset_versions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('asset_kind', 'in', ['preset', 'regex_profile'])
        .executeTakeFirstOrThrow(),
    ),
    files: await count(
      db
        .selectFrom('asset_version_files')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    ),
    logs: await count(
      db
        .selectFrom('operation_logs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('target_type', 'in', ['preset', 'regex_profile'])
        .executeTakeFirstOrThrow(),
    ),
  };
}

/** Every version row of an asset, oldest first (payloads included). */
export async function assetVersionsOf(t: TestApp, assetId: string) {
  return t.resources.database.db
    .selectFrom('asset_versions')
    .selectAll()
    .where('asset_id', '=', assetId)
    .orderBy('version_no', 'asc')
    .execute();
}
