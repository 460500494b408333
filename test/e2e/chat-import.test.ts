import { chatTransferRepository, operationLogsRepository, sessionsRepository } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import {
  extJsonlChat,
  MACRO_MAGE,
  nchatFile,
  readChatFixture,
  SERAPHINA,
} from '../support/factories/chat-transfer';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * `POST /import/chat` (spec 3 "Imports"; docs/decisions.md "Chat import and export"): format detection,
 * result fields, the stored tree (floors, pages, swipes, token counts, checksums, names), the character
 * binding, every error code, the size limit at and over it, one transaction, and the operation logs.
 */
describe('Chat import (sync)', () => {
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = alice.apiKey) =>
    t.http
      .post('/import/chat')
      .set('x-api-key', key)
      .send(body as object);
  const tree = (sessionId: string, accountId = alice.accountId) =>
    chatTransferRepository.readSessionTree(t.resources.database.db, accountId, sessionId);
  const sessionCount = async (accountId: string) =>
    (
      await t.resources.database.db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).n;

  it('imports a real ST chat with swipes: result fields, floors, pages, active swipes', async () => {
    const res = await post({ data: readChatFixture(MACRO_MAGE) });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      session_id: expect.stringMatching(/^ses_/),
      title: 'Macro Mage',
      floor_count: 2,
      message_count: 7,
      swipe_count: 4,
      skipped_lines: 0,
      import_source: 'ext_jsonl',
      format: 'ext_jsonl',
    });
    const sessionId = res.body.data.session_id as string;

    const transcript = await t.http.get(`/sessions/${sessionId}/floors`).set('x-api-key', alice.apiKey);
    expect(transcript.status).toBe(200);
    const floors = transcript.body.data as Array<Record<string, any>>;
    expect(floors.map((f) => [f.floor_no, f.state])).toEqual([
      [0, 'committed'],
      [1, 'committed'],
    ]);
    // Floor 0: the greeting, three pages (unexpanded macros), the first one active.
    expect(
      floors[0].pages.map((p: any) => [p.page_kind, p.is_active, p.version, p.messages[0].content]),
    ).toEqual([
      ['greeting', true, 1, 'Welcome, {{user}}! I am {{char}}.'],
      ['greeting', false, 2, 'Ah, {{user}}, back again?'],
      ['greeting', false, 3, 'The curtain rises for {{user}}.'],
    ]);
    // Floor 1: the user's input page, then the reply's three swipes with swipe_id 1 active.
    expect(floors[1].pages.map((p: any) => [p.page_kind, p.is_active, p.messages[0].role])).toEqual([
      ['input', true, 'user'],
      ['output', false, 'assistant'],
      ['output', true, 'assistant'],
      ['output', false, 'assistant'],
    ]);
    expect(floors[1].pages[2].messages[0].content).toBe('ECHO: Hello Macro Mage, I am User. y=5 [swipe 2]');
    expect(floors[1].pages[2].messages[0].created_at).toBe(Date.parse('2026-11-21T21:19:57.578Z'));

    const stored = await tree(sessionId);
    expect(stored.lines).toHaveLength(1);
    expect(stored.floors.every((f) => f.line_id === stored.lines[0].id)).toBe(true);
    for (const message of stored.messages) {
      expect(message.token_count).toBeGreaterThan(0);
      expect(message.token_encoding).toBe('o200k_base');
      expect(message.source).toBe('import');
    }
    expect(stored.messages.find((m) => m.role === 'user')?.name).toBe('User');
    expect(stored.messages.filter((m) => m.role === 'assistant').every((m) => m.name === 'Macro Mage')).toBe(
      true,
    );
    for (const page of stored.pages) expect(page.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    const main = stored.branches.find((b) => b.name === 'main')!;
    expect(main.head_floor_id).toBe(stored.floors.find((f) => f.floor_no === 1)!.id);
    const data = await chatTransferRepository.findSessionData(
      t.resources.database.db,
      alice.accountId,
      sessionId,
    );
    expect(data?.import_format).toBe('ext_jsonl');
    expect((data?.ext_jsonl_header as any).chat_metadata.variables).toEqual({ trick: 'dove', x: 4, y: '5' });
  });

  it('imports the ST default chat (a greeting only) and takes the given title', async () => {
    const res = await post({ data: readChatFixture(SERAPHINA), title: 'Forest' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      title: 'Forest',
      floor_count: 1,
      message_count: 1,
      swipe_count: 0,
    });
    const session = await t.http.get(`/sessions/${res.body.data.session_id}`).set('x-api-key', alice.apiKey);
    expect(session.body.data).toMatchObject({
      title: 'Forest',
      character_id: null,
      character_version_id: null,
    });
  });

  it('counts skipped malformed lines and keeps the rest', async () => {
    const lines = extJsonlChat(2).split('\n');
    lines.splice(2, 0, 'not json', JSON.stringify({ name: 'x', mes: 5 }));
    const res = await post({ data: lines.join('\n') });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      floor_count: 2,
      message_count: 4,
      skipped_lines: 2,
      swipe_count: 0,
    });
  });

  it('binds the latest version of a character with character_id (sync policy pin)', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'Binder' }),
    });
    const updated = await t.http
      .patch(`/characters/${character.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ data: { description: 'second version' } });
    expect(updated.status).toBe(200);
    const latest = (
      await t.resources.database.db
        .selectFrom('characters')
        .select('latest_version_id')
        .where('id', '=', character.id)
        .executeTakeFirstOrThrow()
    ).latest_version_id;
    expect(latest).not.toBe(character.versionId);

    const res = await post({ data: extJsonlChat(1), character_id: character.id });
    expect(res.status).toBe(201);
    const session = await sessionsRepository.findSession(t.resources.database.db, res.body.data.session_id);
    expect(session).toMatchObject({ character_id: character.id, character_version_id: latest });
    // No greeting floor is added from the card: the file's floors only.
    expect(res.body.data.floor_count).toBe(1);
    expect((await tree(session!.id)).floors).toHaveLength(1);
  });

  it('ignores an nchat file binding when character_id is given', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'Given' }),
    });
    const other = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'InFile' }),
    });
    const file = nchatFile([{ input: { content: 'a' }, output: { content: 'b' } }], {
      character_binding: {
        character_id: other.id,
        character_version_id: other.versionId,
        sync_policy: 'latest',
      },
    });
    const res = await post({ data: JSON.stringify(file), character_id: character.id });
    expect(res.status).toBe(201);
    const session = await sessionsRepository.findSession(t.resources.database.db, res.body.data.session_id);
    expect(session).toMatchObject({ character_id: character.id, character_version_id: character.versionId });
    // Without character_id, a binding to this account's own character and version is kept.
    const again = await post({ data: JSON.stringify(file) });
    const rebound = await sessionsRepository.findSession(t.resources.database.db, again.body.data.session_id);
    expect(rebound).toMatchObject({ character_id: other.id, character_version_id: other.versionId });
    // ... and Bob, for whom those ids are another account's, gets an unbound session.
    const bobs = await post({ data: JSON.stringify(file) }, bob.apiKey);
    expect(bobs.status).toBe(201);
    const unbound = await sessionsRepository.findSession(t.resources.database.db, bobs.body.data.session_id);
    expect(unbound).toMatchObject({
      account_id: bob.accountId,
      character_id: null,
      character_version_id: null,
    });
  });

  it('400 character_not_found: unknown, deleted, or another account’s character; nothing stored', async () => {
    const bobs = await importCharacter(t, { apiKey: bob.apiKey });
    const deleted = await importCharacter(t, { apiKey: alice.apiKey });
    expect((await t.http.delete(`/characters/${deleted.id}`).set('x-api-key', alice.apiKey)).status).toBe(
      200,
    );
    const before = await sessionCount(alice.accountId);
    for (const id of ['chr_missing', bobs.id, deleted.id]) {
      const res = await post({ data: extJsonlChat(1), character_id: id });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('character_not_found');
    }
    expect(await sessionCount(alice.accountId)).toBe(before);
  });

  it('imports an nchat file: counts, variables, memories', async () => {
    const file = nchatFile(
      [
        { input: { content: 'one' }, output: { content: 'two' } },
        { input: { content: 'three' }, output: { content: 'four' } },
      ],
      {
        variables: [
          { scope: 'chat', scope_id_ref: null, key: 'mood', value: 'calm', updated_at: 1 },
          { scope: 'floor', scope_id_ref: 'f1', key: 'hp', value: 7, updated_at: 2 },
          { scope: 'branch', scope_id_ref: 'b-main', key: 'arc', value: { n: 1 }, updated_at: 3 },
          { scope: 'page', scope_id_ref: 'p0-out', key: 'seen', value: true, updated_at: 4 },
        ],
        memories: {
          items: [
            {
              _original_id: 'm1',
              content: 'a summary',
              summary_tier: 'short',
              floor_id_ref: 'f0',
              covered_floor_id_refs: ['f0', 'f1'],
            },
            { _original_id: 'm2', content: 'older', branch_id_ref: 'b-main', custom: { kept: true } },
          ],
          edges: [{ from_item_id_ref: 'm1', to_item_id_ref: 'm2', relation_type: 'compacts' }],
        },
      },
    );
    const res = await post({ data: JSON.stringify(file) });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      session_id: expect.stringMatching(/^ses_/),
      title: 'Hand-made chat',
      floor_count: 2,
      message_count: 4,
      skipped_lines: 0,
      import_source: 'nchat',
      format: 'nchat',
      page_count: 4,
      variable_count: 4,
      memory_item_count: 2,
      memory_edge_count: 1,
    });
    const sessionId = res.body.data.session_id as string;
    const stored = await tree(sessionId);
    const floor1 = stored.floors.find((f) => f.floor_no === 1)!;
    const main = stored.branches.find((b) => b.name === 'main')!;
    const vars = await chatTransferRepository.listSessionVariables(
      t.resources.database.db,
      alice.accountId,
      sessionId,
    );
    const byKey = Object.fromEntries(vars.map((v) => [v.key, v]));
    expect(byKey.mood).toMatchObject({ scope: 'chat', scope_id: sessionId, value: 'calm' });
    expect(byKey.hp).toMatchObject({ scope: 'floor', scope_id: floor1.id, floor_id: floor1.id, value: 7 });
    expect(byKey.arc).toMatchObject({
      scope: 'branch',
      scope_id: `${sessionId}:${main.id}`,
      value: { n: 1 },
    });
    expect(byKey.seen.scope).toBe('page');
    expect(stored.pages.map((p) => p.id)).toContain(byKey.seen.page_id);
    // Token counts were missing in the file: counted at import.
    expect(stored.messages.every((m) => m.token_count! > 0 && m.token_encoding === 'o200k_base')).toBe(true);
    const data = await chatTransferRepository.findSessionData(
      t.resources.database.db,
      alice.accountId,
      sessionId,
    );
    const memories = data?.memories as any;
    expect(memories.items[0]).toMatchObject({
      _original_id: 'm1',
      floor_id_ref: stored.floors.find((f) => f.floor_no === 0)!.id,
      covered_floor_id_refs: [stored.floors.find((f) => f.floor_no === 0)!.id, floor1.id],
    });
    expect(memories.items[1]).toMatchObject({ branch_id_ref: main.id, custom: { kept: true } });
    expect(memories.edges).toEqual([
      { from_item_id_ref: 'm1', to_item_id_ref: 'm2', relation_type: 'compacts' },
    ]);
  });

  it('400 validation_error for bad bodies', async () => {
    for (const body of [
      {},
      { data: 5 },
      { data: extJsonlChat(1), title: '' },
      { data: extJsonlChat(1), title: 'x'.repeat(201) },
      { data: extJsonlChat(1), character_id: 7 },
      { data: extJsonlChat(1), extra_field: true },
    ]) {
      const res = await post(body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'validation_error',
      });
    }
    // A 200-character title is the limit and is accepted.
    const ok = await post({ data: extJsonlChat(1), title: 't'.repeat(200) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.title).toBe('t'.repeat(200));
  });

  it('400 import_parse_error, import_empty, import_unsupported_version', async () => {
    const cases: Array<[string, string]> = [
      ['{not json', 'import_parse_error'],
      [
        JSON.stringify({ something: 1 }) + '\n' + JSON.stringify({ name: 'a', is_user: true, mes: 'x' }),
        'import_parse_error',
      ],
      [
        JSON.stringify({
          ...nchatFile([{ input: { content: 'a' }, output: { content: 'b' } }]),
          data: { title: 'x' },
        }),
        'import_parse_error',
      ],
      ['', 'import_empty'],
      ['\n  \n', 'import_empty'],
      [JSON.stringify({ user_name: 'u', character_name: 'c' }), 'import_empty'],
      [JSON.stringify(nchatFile([])), 'import_empty'],
      [
        JSON.stringify(nchatFile([{ input: { content: 'a' }, output: { content: 'b' } }], {}, '2.0.0')),
        'import_unsupported_version',
      ],
    ];
    const before = await sessionCount(alice.accountId);
    for (const [data, code] of cases) {
      const res = await post({ data });
      expect({ data: data.slice(0, 40), status: res.status, code: res.body.error?.code }).toEqual({
        data: data.slice(0, 40),
        status: 400,
        code,
      });
    }
    expect(await sessionCount(alice.accountId)).toBe(before);
  });

  it('is one transaction: a failure after rows were written leaves nothing', async () => {
    // Two variables with the same scope and key: the variable insert fails after the floors, pages and
    // messages were written, and everything (session, Project, logs) is rolled back.
    const file = nchatFile([{ input: { content: 'rolled back' }, output: { content: 'b' } }], {
      variables: [
        { scope: 'chat', scope_id_ref: null, key: 'k', value: 1, updated_at: 1 },
        { scope: 'chat', scope_id_ref: null, key: 'k', value: 2, updated_at: 2 },
      ],
    });
    const before = await sessionCount(alice.accountId);
    const projectsBefore = await t.resources.database.db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', alice.accountId)
      .executeTakeFirstOrThrow();
    const res = await post({ data: JSON.stringify(file) });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('import_parse_error');
    expect(await sessionCount(alice.accountId)).toBe(before);
    const projectsAfter = await t.resources.database.db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', alice.accountId)
      .executeTakeFirstOrThrow();
    expect(projectsAfter.n).toBe(projectsBefore.n);
    const orphans = await t.resources.database.db
      .selectFrom('messages')
      .select('id')
      .where('account_id', '=', alice.accountId)
      .where('content', '=', 'rolled back')
      .execute();
    expect(orphans).toEqual([]);
  });

  it('403 project_access_denied for a non-default Client (the session gets its own Project)', async () => {
    const client = await createClientCaller(t, alice.accountId);
    const res = await post({ data: extJsonlChat(1) }, client.apiKey);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('project_access_denied');
  });

  it('writes import_chat (counts only) and create_session operation logs', async () => {
    const res = await post({ data: readChatFixture(MACRO_MAGE) });
    const sessionId = res.body.data.session_id as string;
    const logs = await operationLogsRepository.list(
      t.resources.database.db,
      { accountId: alice.accountId, filters: { session_id: sessionId } },
      { limit: 10, offset: 0, sortOrder: 'asc' },
    );
    expect(logs.map((l) => l.action)).toEqual(['create_session', 'import_chat']);
    const log = logs[1];
    expect(log).toMatchObject({ target_type: 'session', target_id: sessionId, status: 'succeeded' });
    expect(log.metadata).toEqual({
      floor_count: 2,
      message_count: 7,
      swipe_count: 4,
      skipped_lines: 0,
      format: 'ext_jsonl',
      character_id: null,
      character_version_id: null,
      async: false,
    });
    expect(JSON.stringify(log)).not.toContain('ECHO');
  });
});

describe('Chat import size limit (CHAT_IMPORT_MAX_BYTES)', () => {
  let t: TestApp;
  const LIMIT = 4_000;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_IMPORT_MAX_BYTES: String(LIMIT) } });
  });
  afterAll(async () => {
    await t.close();
  });

  /** An ext_jsonl file of exactly `bytes` UTF-8 bytes (padding in the last message, multi-byte chars included). */
  const fileOf = (bytes: number) => {
    const base = extJsonlChat(1) + '\n';
    const line = (pad: string) => JSON.stringify({ name: 'User', is_user: true, mes: `é${pad}` });
    const overhead = Buffer.byteLength(base + line(''), 'utf8');
    const text = base + line('x'.repeat(bytes - overhead));
    expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
    return text;
  };

  it.each(['/import/chat', '/import/chat/jobs'])(
    '%s accepts a file at the limit and answers 413 one byte over',
    async (path) => {
      const at = await t.http
        .post(path)
        .set('x-api-key', ADMIN_KEY)
        .send({ data: fileOf(LIMIT) });
      expect(at.status).toBe(path === '/import/chat' ? 201 : 202);
      const over = await t.http
        .post(path)
        .set('x-api-key', ADMIN_KEY)
        .send({ data: fileOf(LIMIT + 1) });
      expect(over.status).toBe(413);
      expect(over.body.error).toMatchObject({
        code: 'import_payload_too_large',
        details: { byte_count: LIMIT + 1, max_bytes: LIMIT },
      });
    },
  );
});
