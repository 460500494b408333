import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { newId } from '@hearth/domain';
import { buildPrompt, type PromptEngineResult } from '@hearth/domain/prompt/engine';
import { loadTurnContext, storeFloorPromptSnapshot } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { inTransaction, type FloorRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';
import { importCharacter } from './characters';
import { importPreset } from './presets';
import { createSession } from './sessions';
import { createUserCard } from './user-cards';
import { importWorldbook } from './worldbooks';

/** The golden SillyTavern capture the prompt engine reproduces (issue 4). */
export const GOLDEN_DIR = join(
  __dirname,
  '../../../libs/domain/src/prompt/__fixtures__/golden-example/a-default-seraphina-first-message',
);
export const readGolden = (...parts: string[]) =>
  JSON.parse(readFileSync(join(GOLDEN_DIR, ...parts), 'utf8'));
export const goldenUserMessage = () =>
  readFileSync(join(GOLDEN_DIR, 'inputs', 'user_message.txt'), 'utf8').replace(/\n$/, '');

export interface GoldenSession {
  sessionId: string;
  characterId: string;
  characterVersionId: string;
  presetId: string;
  worldbookId: string | null;
  userCardId: string;
}

/**
 * The golden example's inputs through the real routes: the card, the Default preset and (unless
 * `bindWorldbook: false`) Eldoria imported, a persona like ST's, a session bound to them (greeting on).
 */
export async function createGoldenSession(
  t: TestApp,
  apiKey: string,
  options: { bindWorldbook?: boolean; personaName?: string } = {},
): Promise<GoldenSession> {
  const character = await importCharacter(t, {
    apiKey,
    payload: readGolden('inputs', 'card', 'Seraphina.ccv3.chara_card_v3.json'),
  });
  const preset = await importPreset(t, apiKey, {
    name: `Default ${Date.now()}`,
    data: readGolden('inputs', 'preset', 'openai_Default.st-1.18.0.json'),
  });
  const worldbook =
    options.bindWorldbook === false
      ? null
      : await importWorldbook(
          t,
          apiKey,
          readGolden('inputs', 'worldbooks', 'Eldoria.st-1.18.0.json'),
          'Eldoria',
        );
  const userCard = await goldenPersona(t, apiKey, options.personaName);
  const session = await createSession(t, {
    apiKey,
    body: {
      character_id: character.id,
      character_version_id: character.versionId,
      preset_id: preset.id,
      user_card_id: userCard.id,
      worldbook_ids: worldbook ? [worldbook.id] : [],
    },
  });
  return {
    sessionId: session.id,
    characterId: character.id,
    characterVersionId: character.versionId,
    presetId: preset.id,
    worldbookId: worldbook?.id ?? null,
    userCardId: userCard.id,
  };
}

const personas = new WeakMap<TestApp, Map<string, { id: string }>>();

/** ST's persona of the capture (`User`, no description), one user card per caller and name (names are unique). */
async function goldenPersona(t: TestApp, apiKey: string, name?: string): Promise<{ id: string }> {
  const persona = readGolden('inputs', 'settings.json').persona as { name: string; description: string };
  const byKey = personas.get(t) ?? new Map<string, { id: string }>();
  personas.set(t, byKey);
  const key = `${apiKey}\n${name ?? persona.name}`;
  const known = byKey.get(key);
  if (known) return known;
  const card = await createUserCard(t, apiKey, {
    name: name ?? persona.name,
    description: persona.description,
  });
  byKey.set(key, card);
  return card;
}

/** Row counts of every table of the database (to show a route wrote nothing). */
export async function allRowCounts(t: TestApp): Promise<Record<string, number>> {
  const db = t.resources.database.db;
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db);
  const counts: Record<string, number> = {};
  for (const { table_name } of tables.rows) {
    const res = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.table(table_name)}`.execute(
      db,
    );
    counts[table_name] = Number(res.rows[0]?.n ?? 0);
  }
  return counts;
}

/**
 * A persistent injection of a source the routes cannot write (`agent_injection`, `debug_injection`,
 * `system_override`), through the repository, to show restricted-source trimming.
 */
export async function insertRestrictedInjection(
  t: TestApp,
  session: { id: string; account_id: string },
  fields: {
    source_kind: 'agent_injection' | 'debug_injection' | 'system_override';
    title: string;
    content: string;
    placement?: string;
  },
): Promise<string> {
  const now = Date.now();
  const id = newId('pinj');
  await t.resources.database.db
    .insertInto('prompt_injections')
    .values({
      id,
      account_id: session.account_id,
      session_id: session.id,
      branch_id: null,
      scope: 'session',
      source_kind: fields.source_kind,
      title: fields.title,
      content: fields.content,
      placement: fields.placement ?? 'before_current_user_input',
      placement_params: null,
      order: 100,
      enabled: true,
      mode_scope: null,
      ttl_ms: null,
      expires_at: null,
      created_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/**
 * What the generation use case does when a turn commits, for floors written by `appendTurns`: the
 * engine result of the floor's turn (loaded from its parent, the floor's user message as input) stored
 * with `storeFloorPromptSnapshot`.
 */
export async function storeSnapshotFor(
  t: TestApp,
  actor: Actor,
  floor: FloorRow,
  userInput: string,
): Promise<PromptEngineResult> {
  const db = t.resources.database.db;
  const ctx = await loadTurnContext(db, actor, {
    sessionId: floor.session_id,
    branchId: floor.branch_id,
    sourceFloorId: floor.parent_floor_id,
    intent: 'normal',
    userInput,
    access: 'write',
  });
  const result = buildPrompt(ctx.engineInput);
  await inTransaction(db, ({ tx }) => storeFloorPromptSnapshot(tx, floor, result));
  return result;
}
