import { addOutputPage } from '@hearth/app';
import { expectFieldEquivalent } from '@hearth/domain/formats/format.test-support';
import { inTransaction, operationLogsRepository, type SessionRow } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import {
  extJsonlChat,
  MACRO_MAGE,
  nchatFile,
  readChatFixture,
  SERAPHINA,
  textBody,
} from '../support/factories/chat-transfer';
import { appendTurns } from '../support/factories/conversation';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { putVariable } from '../support/factories/variables';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * `nchat` with every id replaced by a label made of names and positions (branch name, floor_no,
 * superseded or not, page_no, seq), arrays sorted by label, and what an import may not keep (the export
 * time, line creation times) left out: two exports of the same structure compare equal.
 */
function canonicalNchat(file: Json): Json {
  const data = file.data;
  const branchName = new Map<string, string>(data.branches.map((b: Json) => [b._original_id, b.name]));
  const label = new Map<string, string>();
  for (const b of data.branches) label.set(b._original_id, `branch:${b.name}`);
  for (const f of data.floors) {
    const floorLabel = `${branchName.get(f.branch_id_ref)}#${f.floor_no}${f.superseded_at === null ? '' : 's'}`;
    label.set(f._original_id, floorLabel);
    for (const p of f.pages) {
      label.set(p._original_id, `${floorLabel}:${p.page_no}`);
      for (const m of p.messages) label.set(m._original_id, `${floorLabel}:${p.page_no}:${m.seq}`);
    }
  }
  for (const l of data.lines ?? []) {
    const first = data.floors.find(
      (f: Json) => f.line_id_ref === l._original_id && f.floor_no === l.start_floor_no,
    );
    label.set(l._original_id, `line:${label.get(first._original_id)}`);
  }
  const ref = (id: string | null) => (id === null ? null : (label.get(id) ?? `unknown:${id}`));
  const byLabel = (a: Json, b: Json) => String(a._label).localeCompare(String(b._label));
  return {
    spec: file.spec,
    spec_version: file.spec_version,
    export_source: file.export_source,
    data: {
      title: data.title,
      status: data.status,
      character_binding: data.character_binding ?? null,
      branches: data.branches
        .map((b: Json) => ({
          _label: ref(b._original_id),
          name: b.name,
          source: ref(b.source_floor_id_ref),
          head: ref(b.head_floor_id_ref),
          created_at: b.created_at,
          updated_at: b.updated_at,
        }))
        .sort(byLabel),
      lines: (data.lines ?? [])
        .map((l: Json) => ({
          _label: ref(l._original_id),
          parent: ref(l.parent_line_id_ref),
          fork_floor_no: l.fork_floor_no,
          start_floor_no: l.start_floor_no,
        }))
        .sort(byLabel),
      floors: data.floors
        .map((f: Json) => {
          const {
            _original_id,
            branch_id_ref,
            parent_floor_id_ref,
            line_id_ref,
            superseded_by_floor_id_ref,
            pages,
            ...rest
          } = f;
          return {
            _label: ref(_original_id),
            branch: ref(branch_id_ref),
            parent: ref(parent_floor_id_ref),
            line: ref(line_id_ref),
            superseded_by: ref(superseded_by_floor_id_ref),
            ...rest,
            pages: pages.map((p: Json) => ({
              ...p,
              _original_id: ref(p._original_id),
              messages: p.messages.map((m: Json) => ({ ...m, _original_id: ref(m._original_id) })),
            })),
          };
        })
        .sort(byLabel),
      variables: (data.variables ?? [])
        .map((v: Json) => ({
          ...v,
          scope_id_ref: ref(v.scope_id_ref),
          _label: `${v.scope}:${ref(v.scope_id_ref)}:${v.key}`,
        }))
        .sort(byLabel),
      memories: data.memories ?? null,
    },
  };
}

/**
 * Chat export (spec 3 "Exports", "Chat file formats"): `GET /export/chat/:id` as a file download in both
 * formats, what each format keeps, the sync message limit, access, logs, and round trips through the
 * routes (real ST files back line by line; an nchat of branches, a superseded floor and swipes back to the
 * same structure).
 */
describe('Chat export (sync) and round trips', () => {
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

  const importChat = async (data: string, key = alice.apiKey, extra: Json = {}) => {
    const res = await t.http
      .post('/import/chat')
      .set('x-api-key', key)
      .send({ data, ...extra });
    expect(res.status).toBe(201);
    return res.body.data as Json;
  };
  const exportChat = (sessionId: string, query = '', key = alice.apiKey) =>
    t.http.get(`/export/chat/${sessionId}${query}`).set('x-api-key', key).buffer(true).parse(textBody);

  /** A session with two branches, a superseded floor, swipes and variables, built through the app. */
  async function richSession(): Promise<{ session: SessionRow; branchId: string }> {
    const created = await createSession(t, {
      apiKey: alice.apiKey,
      body: { greeting: false, title: 'Rich chat' },
    });
    const session = (await findSessionRow(t, created.id))!;
    const main = await appendTurns(t, session, 3, { text: (i) => `main ${i}` });
    const branched = await t.http
      .post(`/floors/${main[1].id}/branch`)
      .set('x-api-key', alice.apiKey)
      .send({ name: 'side' });
    expect(branched.status).toBe(201);
    const branchId = branched.body.data.branch_id as string;
    await appendTurns(t, session, 2, { branchId, text: (i) => `side ${i}` });
    // A swipe on floor 1: a second output page, made active.
    await inTransaction(t.resources.database.db, ({ tx }) =>
      addOutputPage(tx, {
        floorId: main[1].id,
        messages: [{ role: 'assistant', content: 'a swipe', source: 'model' }],
      }),
    );
    const branches = await t.http.get(`/sessions/${session.id}/branches`).set('x-api-key', alice.apiKey);
    const mainBranch = branches.body.data.find((b: Json) => b.name === 'main');
    const reset = await t.http
      .post(`/sessions/${session.id}/branches/${mainBranch.id}/reset`)
      .set('x-api-key', alice.apiKey)
      .send({ floor_id: main[1].id });
    expect(reset.status).toBe(200);
    await appendTurns(t, session, 1, { text: () => 'after reset' });
    for (const body of [
      { scope: 'chat', scope_id: session.id, key: 'mood', value: 'calm' },
      { scope: 'branch', scope_id: `${session.id}:${branchId}`, key: 'arc', value: { step: 2 } },
    ]) {
      const res = await putVariable(t, alice.apiKey, body);
      expect(res.status).toBe(201);
    }
    return { session, branchId };
  }

  it.each([MACRO_MAGE, SERAPHINA])(
    'exports the imported ST chat %s back line by line, field by field',
    async (name) => {
      const original = readChatFixture(name);
      const imported = await importChat(original);
      const res = await exportChat(imported.session_id as string, '?format=ext_jsonl');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      const character = name === MACRO_MAGE ? 'Macro Mage' : 'Seraphina';
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${character}.jsonl"`);
      const exported = (res.body as string).split('\n');
      const lines = original.split('\n').filter((line) => line.trim() !== '');
      expect(exported).toHaveLength(lines.length);
      lines.forEach((line, i) =>
        expectFieldEquivalent(JSON.parse(exported[i]), JSON.parse(line), `$line${i + 1}`),
      );
    },
  );

  it('round trips ext_jsonl → nchat → nchat import → ext_jsonl without losing a field', async () => {
    const original = readChatFixture(MACRO_MAGE);
    const first = await importChat(original);
    const nchat = await exportChat(first.session_id as string, '?format=nchat');
    const second = await importChat(nchat.body as string);
    expect(second).toMatchObject({ format: 'nchat', floor_count: 2, message_count: 7, page_count: 7 });
    const back = await exportChat(second.session_id as string, '?format=ext_jsonl');
    const lines = original.split('\n');
    const exported = (back.body as string).split('\n');
    // The ST header travels in the nchat file (`data.ext_jsonl_header`): every line comes back whole.
    expect(JSON.parse(nchat.body as string).data.ext_jsonl_header).toEqual(JSON.parse(lines[0]));
    expect(exported).toHaveLength(lines.length);
    lines.forEach((line, i) =>
      expectFieldEquivalent(JSON.parse(exported[i]), JSON.parse(line), `$line${i + 1}`),
    );
  });

  it('nchat: a session with two branches, a superseded floor and swipes re-imports to the same structure', async () => {
    const { session } = await richSession();
    const res = await exportChat(session.id);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Rich chat.nchat"');
    const file = JSON.parse(res.body as string);
    expect(file).toMatchObject({ spec: 'native_chat', spec_version: '1.0.0', export_source: 'api' });
    expect(file.data.branches.map((b: Json) => b.name).sort()).toEqual(['main', 'side']);
    const superseded = file.data.floors.filter((f: Json) => f.superseded_at !== null);
    expect(superseded).toHaveLength(1);
    expect(superseded[0].superseded_by_floor_id_ref).toEqual(expect.any(String));
    expect(file.data.floors.every((f: Json) => f.pages.every((p: Json) => /^sha256:/.test(p.checksum)))).toBe(
      true,
    );
    expect(file.data.floors.some((f: Json) => f.token_in === 10 && f.token_out === 5)).toBe(true);
    expect(file.data.variables).toHaveLength(2);

    const imported = await importChat(res.body as string);
    expect(imported).toMatchObject({
      format: 'nchat',
      title: 'Rich chat',
      floor_count: file.data.floors.length,
      variable_count: 2,
      memory_item_count: 0,
      memory_edge_count: 0,
    });
    const again = await exportChat(imported.session_id as string);
    const second = JSON.parse(again.body as string);
    const canonical = canonicalNchat(file);
    expect(JSON.stringify(canonical)).not.toContain('unknown:');
    expect(canonical.data.floors.map((f: Json) => f._label)).toEqual([
      'main#0',
      'main#1',
      'main#2',
      'main#2s',
      'side#2',
      'side#3',
    ]);
    expect(canonical.data.lines).toHaveLength(3);
    expect(canonicalNchat(second)).toEqual(canonical);

    // The transcripts of both branches read the same through the transcript route.
    const read = async (sessionId: string, branch: string) => {
      const branches = await t.http.get(`/sessions/${sessionId}/branches`).set('x-api-key', alice.apiKey);
      const id = branches.body.data.find((b: Json) => b.name === branch).id;
      const floors = await t.http
        .get(`/sessions/${sessionId}/floors?branch_id=${id}`)
        .set('x-api-key', alice.apiKey);
      return floors.body.data.map((f: Json) => [
        f.floor_no,
        f.pages.map((p: Json) => [p.page_kind, p.is_active, p.messages.map((m: Json) => m.content)]),
      ]);
    };
    for (const branch of ['main', 'side']) {
      expect(await read(imported.session_id as string, branch)).toEqual(await read(session.id, branch));
    }
  });

  it('ext_jsonl exports only the live committed floors of main, swipes merged', async () => {
    const { session } = await richSession();
    const res = await exportChat(session.id, '?format=ext_jsonl');
    expect(res.status).toBe(200);
    const lines = (res.body as string).split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toEqual({ chat_metadata: {}, user_name: 'unused', character_name: 'unused' });
    expect(lines.slice(1).map((l) => l.mes)).toEqual([
      'user: main 0',
      'reply: main 0',
      'user: main 1',
      'a swipe',
      'user: after reset',
      'reply: after reset',
    ]);
    expect(lines[4]).toMatchObject({ swipes: ['reply: main 1', 'a swipe'], swipe_id: 1 });
    // No character bound: the file is named after the session title.
    expect(res.headers['content-disposition']).toBe('attachment; filename="Rich chat.jsonl"');
  });

  it('include_variables=false and include_memories=false leave them out of nchat', async () => {
    const file = nchatFile([{ input: { content: 'x' }, output: { content: 'y' } }], {
      variables: [{ scope: 'chat', scope_id_ref: null, key: 'k', value: 1, updated_at: 1 }],
      memories: { items: [{ _original_id: 'm', content: 'mem', floor_id_ref: 'f0' }], edges: [] },
    });
    const imported = await importChat(JSON.stringify(file));
    const full = JSON.parse((await exportChat(imported.session_id as string)).body as string);
    expect(full.data.variables).toEqual([
      { scope: 'chat', scope_id_ref: null, key: 'k', value: 1, updated_at: 1 },
    ]);
    const floorId = full.data.floors[0]._original_id;
    expect(full.data.memories).toEqual({
      items: [{ _original_id: 'm', content: 'mem', floor_id_ref: floorId }],
      edges: [],
    });
    const bare = JSON.parse(
      (await exportChat(imported.session_id as string, '?include_variables=false&include_memories=false'))
        .body as string,
    );
    expect(bare.data).not.toHaveProperty('variables');
    expect(bare.data).not.toHaveProperty('memories');
    expect(bare.data.floors).toHaveLength(1);
  });

  it('include_memories (default true) always carries memories with items and edges, empty when there are none', async () => {
    const imported = await importChat(extJsonlChat(1));
    const full = JSON.parse((await exportChat(imported.session_id as string)).body as string);
    expect(full.data.memories).toEqual({ items: [], edges: [] });
    expect(full.data.variables).toEqual([]);
    const asked = JSON.parse(
      (await exportChat(imported.session_id as string, '?include_memories=true')).body as string,
    );
    expect(asked.data.memories).toEqual({ items: [], edges: [] });
    const bare = JSON.parse(
      (await exportChat(imported.session_id as string, '?include_memories=false')).body as string,
    );
    expect(bare.data).not.toHaveProperty('memories');
    // The file imports back, with no memory.
    const back = await importChat(JSON.stringify(full));
    expect(back).toMatchObject({ format: 'nchat', memory_item_count: 0, memory_edge_count: 0 });
  });

  it('names the ext_jsonl file after the bound character', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'Ünïcode Bot' }),
    });
    const imported = await importChat(extJsonlChat(1), alice.apiKey, { character_id: character.id });
    const res = await exportChat(imported.session_id as string, '?format=ext_jsonl');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="_n_code Bot.jsonl"; filename*=UTF-8''${encodeURIComponent('Ünïcode Bot.jsonl')}`,
    );
  });

  it('404 not_found for a missing session or another account’s session', async () => {
    const imported = await importChat(extJsonlChat(1));
    for (const [id, key] of [
      ['ses_missing', alice.apiKey],
      [imported.session_id, bob.apiKey],
    ]) {
      const res = await t.http.get(`/export/chat/${id}`).set('x-api-key', key);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('400 validation_error for a bad query', async () => {
    const imported = await importChat(extJsonlChat(1));
    for (const query of ['?format=zip', '?include_variables=maybe', '?include_memories=2', '?other=1']) {
      const res = await t.http
        .get(`/export/chat/${imported.session_id}${query}`)
        .set('x-api-key', alice.apiKey);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
        query,
        status: 400,
        code: 'validation_error',
      });
    }
  });

  it('writes an export_chat operation log with counts only', async () => {
    const imported = await importChat(readChatFixture(MACRO_MAGE));
    await exportChat(imported.session_id as string, '?format=ext_jsonl');
    const logs = await operationLogsRepository.list(
      t.resources.database.db,
      {
        accountId: alice.accountId,
        filters: { action: 'export_chat', session_id: imported.session_id as string },
      },
      { limit: 10, offset: 0, sortOrder: 'asc' },
    );
    expect(logs).toHaveLength(1);
    expect(logs[0].metadata).toMatchObject({
      format: 'ext_jsonl',
      floor_count: 2,
      message_count: 7,
      page_count: 7,
      async: false,
      byte_count: expect.any(Number),
    });
    expect(JSON.stringify(logs[0])).not.toContain('ECHO');
  });
});

describe('Chat export sync limit (CHAT_EXPORT_SYNC_MAX_MESSAGES)', () => {
  let t: TestApp;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_EXPORT_SYNC_MAX_MESSAGES: '4' } });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('exports at the limit and answers 409 export_requires_async one message over', async () => {
    const at = await t.http
      .post('/import/chat')
      .set('x-api-key', alice.apiKey)
      .send({ data: extJsonlChat(2) });
    expect(at.body.data.message_count).toBe(4);
    const ok = await t.http.get(`/export/chat/${at.body.data.session_id}`).set('x-api-key', alice.apiKey);
    expect(ok.status).toBe(200);

    const lines = extJsonlChat(2).split('\n');
    lines.push(JSON.stringify({ name: 'User', is_user: true, mes: 'one more' }));
    const over = await t.http
      .post('/import/chat')
      .set('x-api-key', alice.apiKey)
      .send({ data: lines.join('\n') });
    expect(over.body.data.message_count).toBe(5);
    const refused = await t.http
      .get(`/export/chat/${over.body.data.session_id}`)
      .set('x-api-key', alice.apiKey);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'export_requires_async',
      details: { message_count: 5, max_messages: 4 },
    });
  });
});
