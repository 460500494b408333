import { sql, type Kysely } from 'kysely';
import { up as backfill } from '../../db/migrations/20261128110000_authors_note_backfill';
import { textBody } from '../support/factories/chat-transfer';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * Migration `20261128110000_authors_note_backfill` (docs/decisions.md "Author's note and persona
 * position"): a session imported from an `ext_jsonl` file before the author's note was stored keeps it
 * only in the captured header; the backfill copies the header's valid `note_*` keys into the session's
 * prompt settings, as an import does now. Such sessions are made here by importing and then removing
 * what the import wrote, as the earlier build left them.
 */
describe('author’s note backfill of earlier ext_jsonl imports', () => {
  let t: TestApp;
  const db = () => t.resources.database.db;
  const settings = async (id: string) =>
    (await t.http.get(`/sessions/${id}/prompt-runtime/mode`).set('x-api-key', ADMIN_KEY).expect(200)).body
      .data;
  const chatWith = (chat_metadata: Json) =>
    [
      { chat_metadata, user_name: 'unused', character_name: 'unused' },
      { name: 'User', is_user: true, is_system: false, send_date: 1_700_000_000_000, mes: 'hi', extra: {} },
      { name: 'Bot', is_user: false, send_date: 1_700_000_000_500, mes: 'hello', extra: {} },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');
  /** An import as the build before the note left it: the header stored, no note in the settings. */
  const legacyImport = async (chat_metadata: Json) => {
    const res = await t.http
      .post('/import/chat')
      .set('x-api-key', ADMIN_KEY)
      .send({ data: chatWith(chat_metadata) })
      .expect(201);
    const id = res.body.data.session_id as string;
    await sql`DELETE FROM session_prompt_settings WHERE session_id = ${id}`.execute(db());
    return id;
  };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('copies the valid note keys; leaves invalid ones out; keeps a session’s own settings and bumps its version', async () => {
    const full = await legacyImport({
      note_prompt: 'Remember the storm.',
      note_interval: 2,
      note_depth: 3,
      note_position: 2,
      note_role: 1,
    });
    const partial = await legacyImport({
      note_prompt: 'x'.repeat(100_001),
      note_interval: 10_000,
      note_depth: 1.5,
      note_position: 5,
      note_role: 2,
    });
    const noNote = await legacyImport({ integrity: 'abc' });
    const own = await legacyImport({ note_prompt: 'From the file', note_depth: 6 });
    await t.http
      .put(`/sessions/${own}/prompt-runtime/mode`)
      .set('x-api-key', ADMIN_KEY)
      .send({ prompt_mode: 'native', authors_note: { depth: 9 } })
      .expect(200);
    expect((await settings(full)).settings.authors_note).toEqual({});

    await backfill(db() as unknown as Kysely<unknown>);

    const a = await settings(full);
    expect(a.settings.authors_note).toEqual({
      prompt: 'Remember the storm.',
      interval: 2,
      depth: 3,
      position: 'before_prompt',
      role: 'user',
    });
    expect(a.version).toBe(1);
    expect((await settings(partial)).settings.authors_note).toEqual({ role: 'assistant' });
    const none = await settings(noNote);
    expect([none.version, none.settings.authors_note]).toEqual([0, {}]);
    const b = await settings(own);
    expect(b.settings).toMatchObject({
      prompt_mode: 'native',
      authors_note: { prompt: 'From the file', depth: 9 },
    });
    expect(b.version).toBe(2);

    // Run again: nothing changes, no version moves.
    await backfill(db() as unknown as Kysely<unknown>);
    expect((await settings(own)).version).toBe(2);
    expect((await settings(full)).version).toBe(1);

    // The export writes the note back as it was in the file.
    const file = await t.http
      .get(`/export/chat/${full}?format=ext_jsonl`)
      .set('x-api-key', ADMIN_KEY)
      .buffer(true)
      .parse(textBody)
      .expect(200);
    expect(JSON.parse((file.body as string).split('\n')[0]).chat_metadata).toEqual({
      note_prompt: 'Remember the storm.',
      note_interval: 2,
      note_depth: 3,
      note_position: 2,
      note_role: 1,
    });
  });
});
