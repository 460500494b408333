import { sql } from 'kysely';
import { newId } from '@hearth/domain';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createLibrary } from '../support/factories/library';
import { createProject } from '../support/factories/projects';
import { createSession, createSessionInProject } from '../support/factories/sessions';
import { createDerivedOutput } from '../support/factories/derived-outputs';
import { activateProfile, createProfile } from '../support/factories/llm-profiles';
import { createMcpServer, createToolPolicy } from '../support/factories/settings';
import { worldbookEntryRows } from '../support/factories/worldbooks';
import type { TestApp } from '../support/test-app';
import { createAgentType, createBinding, defaultWorkspace, runBinding } from './agents-support';

/**
 * The two-account world of the BOLA suites (R8: bola-sweep.test.ts sweeps path parameters,
 * bola-body-refs.test.ts ids inside bodies and queries). Account A (Alice) owns one object of every
 * kind, with BOLA_MARK in its texts; account B (Bob) owns objects of the parent kinds, on which it sends
 * A's ids. The app must be started with a fake model server (startTurnsApp): A commits one turn.
 */

/** The kinds of object an id can name. */
export type Kind =
  | 'account'
  | 'agentJob'
  | 'agentType'
  | 'backupJob'
  | 'binding'
  | 'branch'
  | 'branchInjection'
  | 'character'
  | 'characterVersion'
  | 'chatTransferJob'
  | 'client'
  | 'clientDataNamespace'
  | 'derivedOutput'
  | 'floor'
  | 'inboxEntry'
  | 'injection'
  | 'llmProfile'
  | 'mcpServer'
  | 'memberAccount'
  | 'message'
  | 'nodeGraph'
  | 'page'
  | 'preset'
  | 'presetVersion'
  | 'project'
  | 'regexProfile'
  | 'regexProfileVersion'
  | 'run'
  | 'session'
  | 'temporaryConversation'
  | 'toolPolicy'
  | 'userCard'
  | 'variable'
  | 'vcTag'
  | 'workspace'
  | 'worldbook'
  | 'worldbookEntry'
  | 'worldbookVersion';

/** A text in A's objects that B must never see. */
export const BOLA_MARK = 'AlicePrivateMark';

export interface BolaWorld {
  alice: Caller;
  bob: Caller;
  /** A's object of each kind. */
  a: Record<Kind, string>;
  /** B's own objects of the parent kinds. */
  b: Partial<Record<Kind, string>>;
}

/** A random id of the same kind as `id` (same prefix). */
export const randomLike = (id: string) => newId(id.slice(0, id.lastIndexOf('_')));

/** Replaces `{key}` in every string of `value` by `ids[key]` (unknown keys are left as they are). */
export function fill(value: unknown, ids: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{([\w:]+)\}/g, (_, k: string) => ids[k] ?? `{${k}}`);
  if (Array.isArray(value)) return value.map((v) => fill(v, ids));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ids)]));
  return value;
}

/** Returns a function reading one checksum per table of the database (every base table), in one statement. */
export async function tableChecksums(t: TestApp): Promise<() => Promise<Record<string, string>>> {
  const db = t.resources.database.db;
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db);
  const parts = tables.rows.map(
    ({ table_name: name }) =>
      sql`SELECT ${name}::text AS name, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS sum FROM ${sql.table(name)} x`,
  );
  return async () => {
    const res = await sql<{ name: string; sum: string }>`${sql.join(parts, sql` UNION ALL `)}`.execute(db);
    return Object.fromEntries(res.rows.map((r) => [r.name, r.sum]));
  };
}

/** Seeds both accounts through the factories and the real routes. */
export async function seedBolaWorld(t: TestApp): Promise<BolaWorld> {
  const MARK = BOLA_MARK;
  const a = {} as Record<Kind, string>;
  const b = {} as Partial<Record<Kind, string>>;
  const alice = await createAccountCaller(t, { name: `Alice ${MARK}` });
  const bob = await createAccountCaller(t, { name: 'Bob' });
  const carol = await createAccountCaller(t, { name: 'Carol' });
  const aliceSide = await createClientCaller(t, alice.accountId, `Side ${MARK}`);
  const as = (method: 'get' | 'post' | 'put' | 'patch', path: string, body?: object) =>
    t.http[method](path)
      .set('x-api-key', alice.apiKey)
      .send(body ?? {})
      .then((res) => {
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
        return res.body as Record<string, any>;
      });
  const db = t.resources.database.db;

  // Account A: one object of every kind.
  a.account = alice.accountId;
  a.client = aliceSide.clientId;
  a.memberAccount = carol.accountId;
  a.workspace = (await defaultWorkspace(t, alice.accountId)).id;
  const project = await createProject(t, { accountId: alice.accountId, name: `Project ${MARK}` });
  a.project = project.id;
  await addMember(t, project, carol, 'observer');
  const library = await createLibrary(t, alice.apiKey);
  a.character = library.character_id;
  a.characterVersion = library.character_version_id;
  a.userCard = library.user_card_id;
  a.preset = library.preset_id;
  a.regexProfile = library.regex_profile_id;
  a.worldbook = library.worldbook_ids[0];
  a.presetVersion = (await as('get', `/presets/${a.preset}/versions`)).data[0].id;
  a.regexProfileVersion = (await as('get', `/regex-profiles/${a.regexProfile}/versions`)).data[0].id;
  a.worldbookVersion = (await as('get', `/worldbooks/${a.worldbook}/versions`)).data[0].id;
  a.worldbookEntry = (await worldbookEntryRows(t, a.worldbook))[0].id;

  // A namespace's name is its id (per account); one shaped like an id, so `randomLike` makes another.
  a.clientDataNamespace = (
    await as('post', '/client-data/namespaces', { name: newId('ns'), description: MARK })
  ).data.name;
  const session = await createSessionInProject(t, project.id, {
    apiKey: alice.apiKey,
    body: { title: `Session ${MARK}`, character_id: a.character, user_card_id: a.userCard },
  });
  a.session = session.id;
  const turn = (
    await as('post', `/sessions/${a.session}/respond`, {
      message: `hello ${MARK}`,
      session_state_writes: [{ namespace: a.clientDataNamespace, slot: 'secret', value: MARK }],
    })
  ).data;
  a.floor = turn.floor_id;
  a.page = turn.page_id;
  a.run = turn.run_id;
  a.branch = turn.branch_id;
  a.message = (
    await db.selectFrom('messages').select('id').where('floor_id', '=', a.floor).executeTakeFirstOrThrow()
  ).id;
  const injection = {
    source_kind: 'client_injection',
    title: MARK,
    content: MARK,
    placement: 'after_history',
  };
  a.injection = (await as('post', `/sessions/${a.session}/prompt-runtime/injections`, injection)).data.id;
  a.branchInjection = (
    await as('post', `/sessions/${a.session}/prompt-runtime/branches/${a.branch}/injections`, injection)
  ).data.id;
  a.variable = (
    await as('put', '/variables', { scope: 'chat', scope_id: a.session, key: 'mood', value: MARK })
  ).data.id;
  a.vcTag = (
    await as('post', '/vc-tags', { name: `tag ${MARK}`, target_type: 'floor', target_id: a.floor })
  ).data.id;
  a.temporaryConversation = (await as('post', `/sessions/${a.session}/temporary-conversations`, {})).data.id;
  a.chatTransferJob = (await as('post', `/export/chat/${a.session}/jobs`, {})).data.job_id;
  a.backupJob = (await as('post', '/backup/jobs/export', {})).data.job_id;

  const profile = await createProfile(t, alice.apiKey, { preset_name: `Profile ${MARK}` });
  a.llmProfile = profile.id;
  await activateProfile(t, alice.apiKey, profile.id, {
    scope: 'session',
    session_id: a.session,
    instance_slot: 'narrator',
  });
  a.mcpServer = (await createMcpServer(t, alice.apiKey, { name: `mcp-${MARK}` })).id;
  a.toolPolicy = (await createToolPolicy(t, alice.apiKey, { name: `policy-${MARK}` })).id;

  a.agentType = (await createAgentType(t, alice.apiKey, a.workspace, { name: `Type ${MARK}` })).id;
  a.binding = (await createBinding(t, alice.apiKey, a.project, { agent_type_id: a.agentType })).id;
  a.agentJob = (await runBinding(t, alice.apiKey, a.project, a.binding)).job_id;
  a.derivedOutput = (await createDerivedOutput(t, a.project, alice.apiKey, { value: { text: MARK } })).id;
  a.inboxEntry = (
    await as('post', `/projects/${a.project}/inbox`, { kind: 'suggestion', title: MARK })
  ).item.id;
  a.nodeGraph = (
    await as('post', `/projects/${a.project}/node-graphs`, {
      name: `Graph ${MARK}`,
      graph: { nodes: [{ id: 'n0', type: 'step' }], edges: [] },
    })
  ).item.id;

  // Account B: its own objects of the parent kinds, on which it names A's objects.
  b.workspace = (await defaultWorkspace(t, bob.accountId)).id;
  b.project = (await createProject(t, { accountId: bob.accountId })).id;
  const bobLibrary = await createLibrary(t, bob.apiKey);
  b.character = bobLibrary.character_id;
  b.preset = bobLibrary.preset_id;
  b.regexProfile = bobLibrary.regex_profile_id;
  b.worldbook = bobLibrary.worldbook_ids[0];
  b.session = (await createSession(t, { apiKey: bob.apiKey })).id;
  b.branch = (
    await db.selectFrom('branches').select('id').where('session_id', '=', b.session).executeTakeFirstOrThrow()
  ).id;
  b.llmProfile = (await createProfile(t, bob.apiKey)).id;
  const bobTemporary = await t.http
    .post(`/sessions/${b.session}/temporary-conversations`)
    .set('x-api-key', bob.apiKey)
    .send({});
  b.temporaryConversation = bobTemporary.body.data.id;
  return { alice, bob, a, b };
}
