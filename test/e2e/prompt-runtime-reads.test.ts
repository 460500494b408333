import type { Actor } from '@hearth/permissions';
import type { FloorRow, SessionRow } from '@hearth/persistence';
import { accountActor } from '../support/factories/accounts';
import { characterCard, importCharacter } from '../support/factories/characters';
import { appendGeneratingFloor, appendTurns } from '../support/factories/conversation';
import { addMember, createAccountCaller, defaultCaller, type Caller } from '../support/factories/members';
import { findProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { createUserCard } from '../support/factories/user-cards';
import { allRowCounts, insertRestrictedInjection, storeSnapshotFor } from '../support/factories/turn-context';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

describe('prompt-runtime reads: explain, compare, preview, inspect', () => {
  let t: TestApp;
  let owner: Actor;
  let other: Caller;
  let observer: Caller;

  const post = (url: string, body: Record<string, unknown>, key = ADMIN_KEY) =>
    t.http.post(url).set('x-api-key', key).send(body);
  const get = (url: string, key = ADMIN_KEY) => t.http.get(url).set('x-api-key', key);

  /** A session with a character (greeting floor 0) and `turns` committed turns, each with its stored prompt. */
  async function chat(turns: number, options: { persona?: string } = {}) {
    const character = await importCharacter(t, {
      payload: characterCard({ name: 'Aria', first_mes: 'Hello, traveller.' }),
    });
    const userCard = options.persona ? await createUserCard(t, ADMIN_KEY, { name: options.persona }) : null;
    const created = await createSession(t, {
      body: { character_id: character.id, ...(userCard ? { user_card_id: userCard.id } : {}) },
    });
    const session = (await findSessionRow(t, created.id))!;
    const floors: FloorRow[] = [];
    for (let i = 0; i < turns; i++) {
      const [floor] = await appendTurns(t, session, 1, { text: () => `turn ${i}` });
      await storeSnapshotFor(t, owner, floor, `user: turn ${i}`);
      floors.push(floor);
    }
    return { session, floors };
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = accountActor(await defaultCaller(t, ADMIN_KEY));
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  const observe = async (session: SessionRow) =>
    addMember(t, (await findProject(t, session.project_id))!, observer, 'observer');

  describe('GET /floors/:id/prompt-runtime/explain', () => {
    it('answers the stored prompt: the messages dry-run showed for that state, with snapshot, assembly and trace', async () => {
      const { session } = await chat(1);
      const preview = await post(`/sessions/${session.id}/respond/dry-run`, {
        message: 'user: turn 1',
      }).expect(200);
      const [floor] = await appendTurns(t, session, 1, { text: () => 'turn 1' });
      await storeSnapshotFor(t, owner, floor, 'user: turn 1');
      const res = await get(`/floors/${floor.id}/prompt-runtime/explain`).expect(200);
      const data = res.body.data;
      expect(data).toMatchObject({
        floor_id: floor.id,
        floor_no: floor.floor_no,
        branch_id: floor.branch_id,
        session_id: session.id,
      });
      expect(data.messages).toEqual(preview.body.data.messages);
      expect(data.prompt_snapshot.prompt_digest).toBe(preview.body.data.prompt_snapshot.prompt_digest);
      expect(data.token_estimate).toBe(preview.body.data.token_estimate);
      expect(data.assembly.prompt_intent).toBe('normal');
      expect(data.runtime_trace).toHaveProperty('macro');
    });

    it('never recomputes: later changes to the session do not change a floor’s explanation', async () => {
      const { session, floors } = await chat(1);
      const before = (await get(`/floors/${floors[0].id}/prompt-runtime/explain`).expect(200)).body.data;
      await post(`/sessions/${session.id}/prompt-runtime/injections`, {
        source_kind: 'client_injection',
        title: 'New',
        content: 'Added later.',
        placement: 'after_history',
      }).expect(201);
      const after = (await get(`/floors/${floors[0].id}/prompt-runtime/explain`).expect(200)).body.data;
      expect(after).toEqual(before);
      expect(JSON.stringify(after.messages)).not.toContain('Added later.');
    });

    it('keeps restricted injections trimmed in the stored trace', async () => {
      const { session } = await chat(0);
      await insertRestrictedInjection(t, session, {
        source_kind: 'debug_injection',
        title: 'Debug title',
        content: 'Debug body.',
      });
      const [floor] = await appendTurns(t, session, 1);
      await storeSnapshotFor(t, owner, floor, 'user: turn 0');
      const res = await get(`/floors/${floor.id}/prompt-runtime/explain`).expect(200);
      expect(res.body.data.runtime_trace.injection.items[0]).toMatchObject({ title: null, restricted: true });
    });

    it('a member (observer) may read it; another account gets 404 floor_not_found', async () => {
      const { session, floors } = await chat(1);
      await observe(session);
      await get(`/floors/${floors[0].id}/prompt-runtime/explain`, observer.apiKey).expect(200);
      const res = await get(`/floors/${floors[0].id}/prompt-runtime/explain`, other.apiKey).expect(404);
      expect(res.body.error.code).toBe('floor_not_found');
      expect(JSON.stringify(res.body)).not.toContain('turn 0');
    });

    it('404 floor_not_found, 409 floor_not_committed, 404 prompt_snapshot_not_found', async () => {
      const { session } = await chat(0);
      expect((await get('/floors/flr_missing/prompt-runtime/explain').expect(404)).body.error.code).toBe(
        'floor_not_found',
      );
      const greeting = await t.resources.database.db
        .selectFrom('floors')
        .selectAll()
        .where('session_id', '=', session.id)
        .where('floor_no', '=', 0)
        .executeTakeFirstOrThrow();
      const noSnapshot = await get(`/floors/${greeting.id}/prompt-runtime/explain`).expect(404);
      expect(noSnapshot.body.error).toMatchObject({
        code: 'prompt_snapshot_not_found',
        details: { floor_id: greeting.id },
      });
      const generating = await appendGeneratingFloor(t, session);
      const res = await get(`/floors/${generating.id}/prompt-runtime/explain`).expect(409);
      expect(res.body.error.code).toBe('floor_not_committed');
    });
  });

  describe('POST /sessions/:id/prompt-runtime/compare', () => {
    it('diffs two committed floors by message index, with digests, activated entries, rules and token estimates', async () => {
      const { session, floors } = await chat(2);
      const res = await post(`/sessions/${session.id}/prompt-runtime/compare`, {
        base_floor_id: floors[0].id,
        target_floor_id: floors[1].id,
      }).expect(200);
      const data = res.body.data;
      const [base, target] = await Promise.all(
        floors.map(async (f) => (await get(`/floors/${f.id}/prompt-runtime/explain`).expect(200)).body.data),
      );
      expect(data.base).toMatchObject({
        floor_id: floors[0].id,
        prompt_digest: base.prompt_snapshot.prompt_digest,
        message_count: base.messages.length,
      });
      expect(data.target).toMatchObject({
        floor_id: floors[1].id,
        prompt_digest: target.prompt_snapshot.prompt_digest,
        message_count: target.messages.length,
      });
      expect(data.identical).toBe(false);
      expect(data.token_estimate).toEqual({
        base: base.token_estimate,
        target: target.token_estimate,
        delta: target.token_estimate - base.token_estimate,
      });
      // The base prompt ends with turn 0's input; the target continues it with turn 0's reply and turn 1's input.
      expect(data.messages.changed).toEqual([]);
      expect(data.messages.unchanged_count).toBe(base.messages.length);
      expect(
        data.messages.added.map((m: { index: number; content: string }) => [m.index, m.content]),
      ).toEqual([
        [base.messages.length, 'reply: turn 0'],
        [base.messages.length + 1, 'user: turn 1'],
      ]);
      expect(data.messages.removed).toEqual([]);
      expect(data.worldbook.activated_uids).toEqual({ added: [], removed: [], common: [] });
      expect(data.assets.preset.changed).toBe(false);
    });

    it('a floor compared with itself is identical', async () => {
      const { session, floors } = await chat(1);
      const res = await post(`/sessions/${session.id}/prompt-runtime/compare`, {
        base_floor_id: floors[0].id,
        target_floor_id: floors[0].id,
      }).expect(200);
      expect(res.body.data.identical).toBe(true);
      expect(res.body.data.messages).toMatchObject({ added: [], removed: [], changed: [] });
      expect(res.body.data.token_estimate.delta).toBe(0);
    });

    it('errors: 400, 404 session_not_found, 404 floor_not_found, 409 floor_not_committed, 404 prompt_snapshot_not_found', async () => {
      const { session, floors } = await chat(1);
      const { floors: foreign } = await chat(1);
      const url = `/sessions/${session.id}/prompt-runtime/compare`;
      expect((await post(url, { base_floor_id: floors[0].id }).expect(400)).body.error.code).toBe(
        'validation_error',
      );
      const body = { base_floor_id: floors[0].id, target_floor_id: floors[0].id };
      expect(
        (await post('/sessions/ses_missing/prompt-runtime/compare', body).expect(404)).body.error.code,
      ).toBe('session_not_found');
      expect((await post(url, body, other.apiKey).expect(404)).body.error.code).toBe('session_not_found');
      expect((await post(url, { ...body, target_floor_id: foreign[0].id }).expect(404)).body.error.code).toBe(
        'floor_not_found',
      );
      expect((await post(url, { ...body, target_floor_id: 'flr_missing' }).expect(404)).body.error.code).toBe(
        'floor_not_found',
      );
      const greeting = floors[0].parent_floor_id!;
      expect((await post(url, { ...body, base_floor_id: greeting }).expect(404)).body.error.code).toBe(
        'prompt_snapshot_not_found',
      );
      const generating = await appendGeneratingFloor(t, session);
      expect((await post(url, { ...body, target_floor_id: generating.id }).expect(409)).body.error.code).toBe(
        'floor_not_committed',
      );
    });

    it('a member (observer) may compare', async () => {
      const { session, floors } = await chat(1);
      await observe(session);
      await post(
        `/sessions/${session.id}/prompt-runtime/compare`,
        { base_floor_id: floors[0].id, target_floor_id: floors[0].id },
        observer.apiKey,
      ).expect(200);
    });
  });

  describe('POST /sessions/:id/prompt-runtime/preview', () => {
    it('expands one text with the session’s context; variable writes are staged, nothing is written', async () => {
      const { session } = await chat(1, { persona: `Robin ${Date.now()}` });
      const before = await allRowCounts(t);
      const res = await post(`/sessions/${session.id}/prompt-runtime/preview`, {
        text: '{{char}} greets {{user}}. {{setvar::mood::calm}}Mood: {{getvar::mood}}. Said: {{input}}',
        message: 'hi there',
      }).expect(200);
      expect(await allRowCounts(t)).toEqual(before);
      const data = res.body.data;
      expect(data.expanded_text).toMatch(/^Aria greets Robin \d+\. Mood: calm\. Said: hi there$/);
      expect(data.macro_engine).toBe('v2');
      expect(data.runtime_trace.macro.staged_mutations).toHaveLength(1);
      expect(data.runtime_trace.macro.mutation_preview.local).toEqual({ mood: 'calm' });
      expect(data.runtime_trace.macro.used_names).toEqual(
        expect.arrayContaining(['char', 'user', 'setvar', 'getvar', 'input']),
      );
    });

    it('macro_engine selects the engine (classic keeps its quirks); unknown macros are warnings', async () => {
      const { session } = await chat(0);
      const url = `/sessions/${session.id}/prompt-runtime/preview`;
      const v2 = await post(url, { text: '{{reverse::abc}} {{nope}}' }).expect(200);
      const classic = await post(url, { text: '{{reverse::abc}}', macro_engine: 'classic' }).expect(200);
      expect(v2.body.data.expanded_text.startsWith('cba ')).toBe(true);
      expect(v2.body.data.runtime_trace.macro.warnings.map((w: { code: string }) => w.code)).toContain(
        'macro_unknown',
      );
      expect(classic.body.data).toMatchObject({ macro_engine: 'classic', expanded_text: 'cba:' });
    });

    it('text length: 1 and 200,000 characters are accepted; empty and 200,001 are 400', async () => {
      const { session } = await chat(0);
      const url = `/sessions/${session.id}/prompt-runtime/preview`;
      await post(url, { text: 'x' }).expect(200);
      await post(url, { text: 'word '.repeat(40_000) }).expect(200);
      for (const text of ['', 'a'.repeat(200_001)])
        expect((await post(url, { text }).expect(400)).body.error.code).toBe('validation_error');
      expect((await post(url, { text: 'x', macro_engine: 'v3' }).expect(400)).body.error.code).toBe(
        'validation_error',
      );
    });

    it('errors: 404 session_not_found (missing, other account), branch_not_found, source_floor_not_found; observers may preview', async () => {
      const { session } = await chat(1);
      const url = `/sessions/${session.id}/prompt-runtime/preview`;
      expect(
        (await post('/sessions/ses_missing/prompt-runtime/preview', { text: 'x' }).expect(404)).body.error
          .code,
      ).toBe('session_not_found');
      expect((await post(url, { text: 'x' }, other.apiKey).expect(404)).body.error.code).toBe(
        'session_not_found',
      );
      expect((await post(url, { text: 'x', branch_id: 'br_missing' }).expect(404)).body.error.code).toBe(
        'branch_not_found',
      );
      expect(
        (await post(url, { text: 'x', source_floor_id: 'flr_missing' }).expect(404)).body.error.code,
      ).toBe('source_floor_not_found');
      await observe(session);
      await post(url, { text: '{{char}}' }, observer.apiKey).expect(200);
    });
  });

  describe('POST /sessions/:id/prompt-runtime/inspect', () => {
    it('an owner who asks gets restricted injection bodies; the dry-run result and an engine input summary come with it', async () => {
      const { session } = await chat(2);
      await insertRestrictedInjection(t, session, {
        source_kind: 'agent_injection',
        title: 'Agent plan',
        content: 'Agent body.',
      });
      const before = await allRowCounts(t);
      const res = await post(`/sessions/${session.id}/prompt-runtime/inspect`, {
        message: 'next',
        include_restricted_injection_content: true,
      }).expect(200);
      expect(await allRowCounts(t)).toEqual(before);
      const data = res.body.data;
      expect(data.restricted_content_included).toBe(true);
      expect(data.runtime_trace.injection.items[0]).toMatchObject({ title: 'Agent plan', restricted: true });
      expect(data.injections[0]).toMatchObject({
        source_kind: 'agent_injection',
        title: 'Agent plan',
        content: 'Agent body.',
        restricted: true,
      });
      expect(data.messages.at(-1)).toEqual({ role: 'user', content: 'next' });
      expect(data.engine_input).toMatchObject({
        intent: 'normal',
        character: { name: 'Aria' },
        user: { name: 'User' },
        history: { message_count: 5, first_floor_no: 0, last_floor_no: 2, hidden_count: 0 },
        next_floor_no: 3,
        lorebooks: [],
        provider: { kind: null, model_id: null },
      });
    });

    it('without the flag, or for a non-owner member, restricted injections are trimmed', async () => {
      const { session } = await chat(1);
      await insertRestrictedInjection(t, session, {
        source_kind: 'system_override',
        title: 'System title',
        content: 'System body.',
      });
      await observe(session);
      const url = `/sessions/${session.id}/prompt-runtime/inspect`;
      for (const [body, key] of [
        [{}, ADMIN_KEY],
        [{ include_restricted_injection_content: true }, observer.apiKey],
      ] as const) {
        const res = await post(url, body, key).expect(200);
        expect(res.body.data.restricted_content_included).toBe(false);
        expect(res.body.data.injections[0]).toMatchObject({
          title: null,
          content: null,
          content_length: 12,
          restricted: true,
        });
        expect(JSON.stringify(res.body.data)).not.toContain('System title');
      }
    });

    it('errors: 404 session_not_found for another account, 400 for bad injections and bad bodies', async () => {
      const { session } = await chat(0);
      const url = `/sessions/${session.id}/prompt-runtime/inspect`;
      expect((await post(url, {}, other.apiKey).expect(404)).body.error.code).toBe('session_not_found');
      const bad = await post(url, {
        prompt_runtime_injections: [
          { source_kind: 'debug_injection', title: 'a', content: 'b', placement: 'after_history' },
        ],
      }).expect(400);
      expect(bad.body.error.code).toBe('invalid_injection_payload');
      expect(
        (await post(url, { include_restricted_injection_content: 'yes' }).expect(400)).body.error.code,
      ).toBe('validation_error');
    });
  });
});
