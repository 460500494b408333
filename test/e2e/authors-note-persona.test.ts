import { operationLogsRepository } from '@hearth/persistence';
import { MACRO_MAGE, readChatFixture, textBody } from '../support/factories/chat-transfer';
import { createSession } from '../support/factories/sessions';
import { createGoldenSession, goldenUserMessage } from '../support/factories/turn-context';
import { createUserCard } from '../support/factories/user-cards';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

const NOTE_DEFAULTS = { prompt: '', interval: 1, depth: 4, position: 'in_chat', role: 'system' };

/**
 * The chat's author's note and the persona's place (docs/decisions.md "Author's note and persona
 * position"): the settings route, the user card's placement below the session's, `ext_jsonl`
 * `chat_metadata.note_*` on import and export, and what a dry-run sends (SillyTavern 1.18's
 * authors-note.js `setFloatingPrompt` and script.js `addPersonaDescriptionExtensionPrompt`).
 */
describe('Author’s note and persona position', () => {
  let t: TestApp;

  const db = () => t.resources.database.db;
  const url = (id: string) => `/sessions/${id}/prompt-runtime/mode`;
  const get = (id: string) => t.http.get(url(id)).set('x-api-key', ADMIN_KEY);
  const put = (id: string, body: unknown) =>
    t.http
      .put(url(id))
      .set('x-api-key', ADMIN_KEY)
      .send(body as object);
  const newSession = async (body: Record<string, unknown> = {}) => (await createSession(t, { body })).id;
  const fieldsOf = (res: { body: Json }) =>
    ((res.body.error?.details?.fields ?? []) as Array<{ field: string }>).map((f) => f.field);
  const settingsLogs = async (sessionId: string) =>
    (
      await operationLogsRepository.list(
        db(),
        { accountId: 'default', filters: { session_id: sessionId } },
        { limit: 100, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.action === 'update_prompt_settings');
  const importChat = async (data: string) => {
    const res = await t.http.post('/import/chat').set('x-api-key', ADMIN_KEY).send({ data }).expect(201);
    return res.body.data.session_id as string;
  };
  const exportHeader = async (sessionId: string): Promise<Json> => {
    const res = await t.http
      .get(`/export/chat/${sessionId}?format=ext_jsonl`)
      .set('x-api-key', ADMIN_KEY)
      .buffer(true)
      .parse(textBody)
      .expect(200);
    return JSON.parse((res.body as string).split('\n')[0]);
  };
  const dryRun = (sessionId: string, message = goldenUserMessage()) =>
    t.http.post(`/sessions/${sessionId}/respond/dry-run`).set('x-api-key', ADMIN_KEY).send({ message });

  /** A jsonl chat whose header carries `chat_metadata` (one exchange). */
  const chatWith = (chat_metadata: Json) =>
    [
      { chat_metadata, user_name: 'unused', character_name: 'unused' },
      { name: 'User', is_user: true, is_system: false, send_date: 1_700_000_000_000, mes: 'hi', extra: {} },
      { name: 'Bot', is_user: false, send_date: 1_700_000_000_500, mes: 'hello', extra: {} },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the settings route', () => {
    it('never written: nothing set; ST’s defaults effective (empty note every message at depth 4, system; persona at depth 2, system)', async () => {
      const id = await newSession();
      const data = (await get(id).expect(200)).body.data;
      expect(data.settings).toMatchObject({ persona_depth: null, persona_role: null, authors_note: {} });
      expect(data.effective).toMatchObject({
        persona_position: 'in_prompt',
        persona_depth: 2,
        persona_role: 'system',
        authors_note: NOTE_DEFAULTS,
      });
      expect(data.sources).toMatchObject({
        persona_position: 'default',
        persona_depth: 'default',
        persona_role: 'default',
        'authors_note.prompt': 'default',
        'authors_note.interval': 'default',
        'authors_note.depth': 'default',
        'authors_note.position': 'default',
        'authors_note.role': 'default',
      });
    });

    it('persona_depth and persona_role: set, kept when absent, reset with null', async () => {
      const id = await newSession();
      const first = await put(id, {
        persona_position: 'at_depth',
        persona_depth: 0,
        persona_role: 'user',
      }).expect(200);
      expect(first.body.data.settings).toMatchObject({
        persona_position: 'at_depth',
        persona_depth: 0,
        persona_role: 'user',
      });
      expect(first.body.data.sources).toMatchObject({ persona_depth: 'session', persona_role: 'session' });
      const second = await put(id, { persona_depth: 10_000 }).expect(200);
      expect(second.body.data.effective).toMatchObject({ persona_depth: 10_000, persona_role: 'user' });
      for (const persona_role of ['system', 'assistant'])
        expect((await put(id, { persona_role }).expect(200)).body.data.effective.persona_role).toBe(
          persona_role,
        );
      const cleared = await put(id, { persona_depth: null, persona_role: null }).expect(200);
      expect(cleared.body.data.settings).toMatchObject({ persona_depth: null, persona_role: null });
      expect(cleared.body.data.effective).toMatchObject({ persona_depth: 2, persona_role: 'system' });
      expect(cleared.body.data.sources).toMatchObject({ persona_depth: 'default', persona_role: 'default' });
    });

    it.each([
      ['persona_depth', -1],
      ['persona_depth', 10_001],
      ['persona_depth', 2.5],
      ['persona_depth', '3'],
      ['persona_role', 'narrator'],
      ['persona_role', 0],
      ['persona_position', 4],
      ['authors_note', 'NOTE'],
      ['authors_note', ['NOTE']],
    ])('%s = %j is 400 validation_error naming it', async (field, value) => {
      const id = await newSession();
      const res = await put(id, { [field]: value }).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldsOf(res)).toEqual([field]);
    });

    it('authors_note merges key by key: a null key resets it, authors_note: null resets them all; the log names keys, never the text', async () => {
      const id = await newSession();
      const first = await put(id, {
        authors_note: {
          prompt: 'Keep it secret',
          interval: 3,
          depth: 0,
          position: 'before_prompt',
          role: 'assistant',
        },
      }).expect(200);
      expect(first.body.data.settings.authors_note).toEqual({
        prompt: 'Keep it secret',
        interval: 3,
        depth: 0,
        position: 'before_prompt',
        role: 'assistant',
      });
      expect(first.body.data.effective.authors_note).toEqual(first.body.data.settings.authors_note);
      expect(first.body.data.sources['authors_note.depth']).toBe('session');

      const second = await put(id, { authors_note: { depth: null, position: 'after_scenario' } }).expect(200);
      expect(second.body.data.settings.authors_note).toEqual({
        prompt: 'Keep it secret',
        interval: 3,
        position: 'after_scenario',
        role: 'assistant',
      });
      expect(second.body.data.effective.authors_note.depth).toBe(4);
      expect(second.body.data.sources).toMatchObject({
        'authors_note.depth': 'default',
        'authors_note.position': 'session',
      });

      // An empty string is a written note (ST's own default text), not a reset.
      const empty = await put(id, { authors_note: { prompt: '' } }).expect(200);
      expect(empty.body.data.sources['authors_note.prompt']).toBe('session');

      const cleared = await put(id, { authors_note: null }).expect(200);
      expect(cleared.body.data.settings.authors_note).toEqual({});
      expect(cleared.body.data.effective.authors_note).toEqual(NOTE_DEFAULTS);
      expect(cleared.body.data.version).toBe(4);
      // Nothing left to reset: no write.
      expect((await put(id, { authors_note: null }).expect(200)).body.data.version).toBe(4);

      const logs = await settingsLogs(id);
      expect(logs.map((l) => (l.metadata as Json).changed_fields)).toEqual([
        [
          'authors_note.depth',
          'authors_note.interval',
          'authors_note.position',
          'authors_note.prompt',
          'authors_note.role',
        ],
        ['authors_note.depth', 'authors_note.position'],
        ['authors_note.prompt'],
        ['authors_note.interval', 'authors_note.position', 'authors_note.prompt', 'authors_note.role'],
      ]);
      expect(JSON.stringify(logs)).not.toContain('Keep it secret');
    });

    it.each([
      ['interval', 0, -1],
      ['interval', 9999, 10_000],
      ['depth', 0, -1],
      ['depth', 10_000, 10_001],
    ])('authors_note.%s: %j accepted, %j refused', async (key, ok, bad) => {
      const id = await newSession();
      const accepted = await put(id, { authors_note: { [key]: ok } }).expect(200);
      expect(accepted.body.data.effective.authors_note[key]).toBe(ok);
      const refused = await put(id, { authors_note: { [key]: bad } }).expect(400);
      expect(refused.body.error.code).toBe('validation_error');
      expect(fieldsOf(refused)).toEqual([`authors_note.${key}`]);
      expect((await get(id)).body.data.settings.authors_note[key]).toBe(ok);
    });

    it('authors_note.prompt: 100,000 characters (code points) accepted, 100,001 refused', async () => {
      const id = await newSession();
      await put(id, { authors_note: { prompt: 'a'.repeat(100_000) } }).expect(200);
      // Characters are code points: 100,000 emoji are 200,000 UTF-16 units and still fit.
      const astral = await put(id, { authors_note: { prompt: '😀'.repeat(100_000) } }).expect(200);
      expect([...astral.body.data.settings.authors_note.prompt]).toHaveLength(100_000);
      for (const prompt of ['a'.repeat(100_001), '😀'.repeat(100_001)]) {
        const res = await put(id, { authors_note: { prompt } }).expect(400);
        expect(fieldsOf(res)).toEqual(['authors_note.prompt']);
      }
      expect((await get(id)).body.data.settings.authors_note.prompt).toBe('😀'.repeat(100_000));
    });

    it('authors_note: unknown keys, wrong types, NUL and bad enums are each named; nothing is written', async () => {
      const id = await newSession();
      const res = await put(id, {
        authors_note: {
          text: 'x',
          prompt: 'a\u0000b',
          interval: 1.5,
          depth: '4',
          position: 1,
          role: 'narrator',
        },
      }).expect(400);
      expect(fieldsOf(res).sort()).toEqual([
        'authors_note.depth',
        'authors_note.interval',
        'authors_note.position',
        'authors_note.prompt',
        'authors_note.role',
        'authors_note.text',
      ]);
      expect(fieldsOf(await put(id, { authors_note: { prompt: 5 } }).expect(400))).toEqual([
        'authors_note.prompt',
      ]);
      expect((await get(id)).body.data.version).toBe(0);
    });
  });

  describe('the user card’s placement (session > card > default)', () => {
    it('a card with ST’s numbers gives position, depth and role; the session’s own setting wins field by field', async () => {
      const card = await createUserCard(t, ADMIN_KEY, {
        description: 'Tall.',
        position: 4,
        depth: 3,
        role: 1,
      });
      const id = await newSession({ user_card_id: card.id });
      const read = (await get(id).expect(200)).body.data;
      expect(read.effective).toMatchObject({
        persona_position: 'at_depth',
        persona_depth: 3,
        persona_role: 'user',
      });
      expect(read.sources).toMatchObject({
        persona_position: 'user_card',
        persona_depth: 'user_card',
        persona_role: 'user_card',
      });
      expect(read.settings).toMatchObject({
        persona_position: null,
        persona_depth: null,
        persona_role: null,
      });

      const written = (await put(id, { persona_depth: 7 }).expect(200)).body.data;
      expect(written.effective).toMatchObject({
        persona_position: 'at_depth',
        persona_depth: 7,
        persona_role: 'user',
      });
      expect(written.sources).toMatchObject({ persona_position: 'user_card', persona_depth: 'session' });
      const none = (await put(id, { persona_position: 'none' }).expect(200)).body.data;
      expect(none.effective.persona_position).toBe('none');
      expect(none.sources.persona_position).toBe('session');
      // Reset: the card's value is back.
      const reset = (await put(id, { persona_position: null, persona_depth: null }).expect(200)).body.data;
      expect(reset.effective).toMatchObject({ persona_position: 'at_depth', persona_depth: 3 });
    });

    it('Hearth’s names are read too; invalid values are ignored one by one; a changed or deleted card counts at once', async () => {
      const card = await createUserCard(t, ADMIN_KEY, { position: 'top_an', depth: -2, role: 'narrator' });
      const id = await newSession({ user_card_id: card.id });
      const first = (await get(id)).body.data;
      expect(first.effective).toMatchObject({
        persona_position: 'top_an',
        persona_depth: 2,
        persona_role: 'system',
      });
      expect(first.sources).toMatchObject({
        persona_position: 'user_card',
        persona_depth: 'default',
        persona_role: 'default',
      });

      await t.http
        .patch(`/users/${card.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ snapshot: { name: card.name, position: 9, depth: 10_001, role: 2 } })
        .expect(200);
      expect((await get(id)).body.data.effective).toMatchObject({
        persona_position: 'none',
        persona_depth: 2,
        persona_role: 'assistant',
      });

      await t.http.delete(`/users/${card.id}`).set('x-api-key', ADMIN_KEY).expect(200);
      const gone = (await get(id)).body.data;
      expect(gone.effective).toMatchObject({ persona_position: 'in_prompt', persona_role: 'system' });
      expect(gone.sources.persona_position).toBe('default');
    });
  });

  describe('SillyTavern chat files', () => {
    it('ext_jsonl import: the header’s note_* become the session’s authors_note settings (version 1)', async () => {
      const id = await importChat(
        chatWith({
          integrity: 'x',
          note_prompt: 'Imported note',
          note_interval: 2,
          note_depth: 1,
          note_position: 2,
          note_role: 1,
        }),
      );
      const data = (await get(id).expect(200)).body.data;
      expect(data.settings.authors_note).toEqual({
        prompt: 'Imported note',
        interval: 2,
        depth: 1,
        position: 'before_prompt',
        role: 'user',
      });
      expect(data.sources['authors_note.prompt']).toBe('session');
      expect(data).toMatchObject({ version: 1, updated_by: 'default' });
      expect(data.settings).toMatchObject({ prompt_mode: null, persona_position: null, lorebook: {} });
    });

    it('only the keys present and valid are taken; a header without any makes no settings row', async () => {
      const partial = await importChat(
        chatWith({
          note_prompt: 'x'.repeat(100_001),
          note_interval: 10_000,
          note_depth: 3,
          note_position: 5,
          note_role: 'user',
        }),
      );
      expect((await get(partial)).body.data.settings.authors_note).toEqual({ depth: 3 });

      const none = await importChat(chatWith({ integrity: 'y' }));
      expect((await get(none)).body.data.version).toBe(0);
      const rows = await db()
        .selectFrom('session_prompt_settings')
        .select('session_id')
        .where('session_id', '=', none)
        .execute();
      expect(rows).toEqual([]);
    });

    it('a real ST 1.18 chat: its note defaults are taken as written, and its header exports back unchanged', async () => {
      const id = await importChat(readChatFixture(MACRO_MAGE));
      expect((await get(id)).body.data.settings.authors_note).toEqual(NOTE_DEFAULTS);
      const header = await exportHeader(id);
      expect(header).toEqual(JSON.parse(readChatFixture(MACRO_MAGE).split('\n')[0]));
    });

    it('ext_jsonl export: the session’s note overlays the captured header (other keys kept), and round trips', async () => {
      const id = await importChat(
        chatWith({ integrity: 'keep', note_prompt: 'Old', note_interval: 1, note_depth: 4, tainted: true }),
      );
      await put(id, {
        authors_note: { prompt: 'New note', position: 'after_scenario', role: 'assistant' },
      }).expect(200);
      const header = await exportHeader(id);
      expect(header.chat_metadata).toEqual({
        integrity: 'keep',
        note_prompt: 'New note',
        note_interval: 1,
        note_depth: 4,
        tainted: true,
        note_position: 0,
        note_role: 2,
      });
      expect(header).toMatchObject({ user_name: 'unused', character_name: 'unused' });

      // The exported file imports back to the same note.
      const file = await t.http
        .get(`/export/chat/${id}?format=ext_jsonl`)
        .set('x-api-key', ADMIN_KEY)
        .buffer(true)
        .parse(textBody)
        .expect(200);
      const again = await importChat(file.body as string);
      expect((await get(again)).body.data.settings.authors_note).toEqual(
        (await get(id)).body.data.settings.authors_note,
      );
    });

    it('a key cleared after the import goes out as the value turns use (its default), not the imported one', async () => {
      const id = await importChat(chatWith({ note_prompt: 'Old', note_interval: 3, note_depth: 7 }));
      await put(id, { authors_note: { interval: null, depth: null } }).expect(200);
      expect((await get(id)).body.data.effective.authors_note).toMatchObject({ interval: 1, depth: 4 });
      expect((await exportHeader(id)).chat_metadata).toEqual({
        note_prompt: 'Old',
        note_interval: 1,
        note_depth: 4,
      });
    });

    it('a header value the import could not take goes back out as written (ST still uses it), unless the session sets that key', async () => {
      // Past Hearth's bounds or not of ST's type: the import leaves these out (turns use the default), but
      // the header is the chat's ST state, so the export must not replace them with Hearth's defaults.
      const longNote = 'x'.repeat(100_001);
      const id = await importChat(
        chatWith({
          note_prompt: longNote,
          note_interval: 10_000,
          note_depth: 3,
          note_position: 5,
          note_role: 'user',
        }),
      );
      expect((await get(id)).body.data.settings.authors_note).toEqual({ depth: 3 });
      const kept = (await exportHeader(id)).chat_metadata;
      expect(kept.note_prompt === longNote).toBe(true);
      expect({ ...kept, note_prompt: 'long' }).toEqual({
        note_prompt: 'long',
        note_interval: 10_000,
        note_depth: 3,
        note_position: 5,
        note_role: 'user',
      });
      // A key the session sets (or resets after importing it) goes out as turns use it.
      await put(id, { authors_note: { interval: 2, depth: null } }).expect(200);
      const written = (await exportHeader(id)).chat_metadata;
      expect(written.note_prompt === longNote).toBe(true);
      expect({ ...written, note_prompt: 'long' }).toEqual({
        note_prompt: 'long',
        note_interval: 2,
        note_depth: 4,
        note_position: 5,
        note_role: 'user',
      });
    });

    it('a session of Hearth’s own: the new header carries the set note keys only', async () => {
      const id = await newSession({ title: 'Native chat' });
      await t.http
        .post(`/sessions/${id}/respond/dry-run`)
        .set('x-api-key', ADMIN_KEY)
        .send({ message: 'x' })
        .expect(200);
      expect((await exportHeader(id)).chat_metadata).toEqual({});
      await put(id, { authors_note: { prompt: 'Mine', depth: 2 } }).expect(200);
      expect(await exportHeader(id)).toEqual({
        chat_metadata: { note_prompt: 'Mine', note_depth: 2 },
        user_name: 'unused',
        character_name: 'unused',
      });
    });
  });

  describe('turns (dry-run messages)', () => {
    const lastUserIndex = (messages: Json[]) => messages.map((m) => m.role).lastIndexOf('user');

    it('the note "NOTE" in chat at depth 1 as system, every message: a system message before the last user message', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      await put(g.sessionId, {
        authors_note: { prompt: 'NOTE', interval: 1, depth: 1, position: 'in_chat', role: 'system' },
      }).expect(200);
      const on = (await dryRun(g.sessionId).expect(200)).body.data;
      expect(on.runtime_trace.authors_note).toMatchObject({
        applied: true,
        position: 'in_chat',
        depth: 1,
        role: 'system',
      });
      const messages = on.messages as Array<Json>;
      const last = lastUserIndex(messages);
      expect(messages[last]).toEqual({ role: 'user', content: goldenUserMessage() });
      expect(messages[last - 1]).toEqual({ role: 'system', content: 'NOTE' });
      expect(messages.filter((m) => m.content === 'NOTE')).toHaveLength(1);

      // Interval 0 disables the note (ST: "0 = Disable").
      await put(g.sessionId, { authors_note: { interval: 0 } }).expect(200);
      const off = (await dryRun(g.sessionId).expect(200)).body.data;
      expect(JSON.stringify(off.messages)).not.toContain('NOTE');
      expect(off.runtime_trace.authors_note).toMatchObject({
        applied: false,
        not_applied_reason: 'interval_disabled',
      });
    });

    it('the card’s persona at depth 0 (system) ends the prompt; the session’s persona_position none removes it', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      const card = await createUserCard(t, ADMIN_KEY, {
        description: 'PERSONA AT DEPTH',
        position: 4,
        depth: 0,
        role: 0,
      });
      await t.http
        .patch(`/sessions/${g.sessionId}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ user_card_id: card.id })
        .expect(200);
      const placed = (await dryRun(g.sessionId).expect(200)).body.data;
      expect(placed.runtime_trace.persona).toMatchObject({
        position: 'at_depth',
        depth: 0,
        role: 'system',
        placed: true,
      });
      const messages = placed.messages as Array<Json>;
      expect(messages.at(-1)).toEqual({ role: 'system', content: 'PERSONA AT DEPTH' });
      expect(messages.at(-2)).toEqual({ role: 'user', content: goldenUserMessage() });
      expect(messages.filter((m) => String(m.content).includes('PERSONA AT DEPTH'))).toHaveLength(1);

      await put(g.sessionId, { persona_position: 'none' }).expect(200);
      const none = (await dryRun(g.sessionId).expect(200)).body.data.messages as Array<Json>;
      expect(JSON.stringify(none)).not.toContain('PERSONA AT DEPTH');

      // The inspect route's engine input summary shows where the persona and the note went.
      await put(g.sessionId, { persona_position: null, persona_role: 'user' }).expect(200);
      const inspect = await t.http
        .post(`/sessions/${g.sessionId}/prompt-runtime/inspect`)
        .set('x-api-key', ADMIN_KEY)
        .send({ message: 'hi' })
        .expect(200);
      expect(inspect.body.data.engine_input.user).toMatchObject({
        position: 'at_depth',
        depth: 0,
        role: 'user',
      });
      expect(inspect.body.data.engine_input.authors_note).toEqual({
        prompt_length: 0,
        interval: 1,
        depth: 4,
        position: 'in_chat',
        role: 'system',
      });
    });
  });
});
