import { createHash } from 'node:crypto';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, findProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  appendMessage,
  conversationRow,
  createInternalTemporary,
  createTemporary,
  expireNow,
  operationLogsOf,
} from './temporary-conversations-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

/**
 * Spec 2 temporary conversations: create (from a session, from a Project), get, messages, transcript,
 * the terminal routes, lazy expiry, access, limits, and that normal session routes never see one.
 */
describe('temporary conversations', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let stranger: Caller;
  let observer: Caller;
  let deriver: Caller;
  let source: Awaited<ReturnType<typeof createSession>>;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    stranger = await createAccountCaller(t, { name: 'Stranger' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    source = await createSession(t, { body: { title: 'Source' } });
    const project = (await findProject(t, source.projectId))!;
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const post = (path: string, body: Record<string, unknown> = {}, key = ADMIN_KEY) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const get = (path: string, key = ADMIN_KEY) => t.http.get(path).set('x-api-key', key);
  const fromSession = (body: Record<string, unknown>, key = ADMIN_KEY) =>
    post(`/sessions/${source.id}/temporary-conversations`, body, key);

  describe('create', () => {
    it('from a session: the resource, the copied bindings, no history, the source digest', async () => {
      // Some history in the source first.
      fake.script({ reply: 'Source reply.' });
      expect((await post(`/sessions/${source.id}/respond`, { message: 'Hello source' })).status).toBe(200);
      await t.http.patch(`/sessions/${source.id}`).set('x-api-key', ADMIN_KEY).send({ title: 'Source' });

      const res = await fromSession({ title: 'Draft', purpose: 'try an idea' });
      expect(res.status).toBe(201);
      const c = res.body.data;
      expect(c).toMatchObject({
        workspace_id: source.workspaceId,
        project_id: source.projectId,
        source_session_id: source.id,
        branch_id: 'main',
        kind: 'temporary',
        title: 'Draft',
        purpose: 'try an idea',
        status: 'active',
        retention_policy: 'delete_on_finalize',
        visibility: 'client_visible',
        expires_at: null,
        finalized_at: null,
        discarded_at: null,
        cancelled_at: null,
        cleaned_at: null,
      });
      expect(c.id).toMatch(/^ses_/);
      expect(c.created_at).toEqual(c.updated_at);
      expect(c.last_activity_at).toBe(c.created_at);
      expect(Object.keys(c).sort()).toEqual(
        [
          'id',
          'workspace_id',
          'project_id',
          'source_session_id',
          'branch_id',
          'kind',
          'title',
          'purpose',
          'status',
          'retention_policy',
          'visibility',
          'created_at',
          'updated_at',
          'last_activity_at',
          'expires_at',
          'finalized_at',
          'discarded_at',
          'cancelled_at',
          'cleaned_at',
        ].sort(),
      );

      // No history copied: the transcript is empty.
      const transcript = await get(`/temporary-conversations/${c.id}/transcript`);
      expect(transcript.status).toBe(200);
      expect(transcript.body.data).toEqual({ conversation_id: c.id, branch_id: 'main', floors: [] });

      // The digest: sha256 over the source's main-branch message ids and contents.
      const floors = (await get(`/sessions/${source.id}/floors`)).body.data as Array<{
        pages: Array<{
          is_active: boolean;
          page_kind: string;
          messages: Array<{ id: string; content: string }>;
        }>;
      }>;
      const hash = createHash('sha256');
      for (const f of floors)
        for (const kind of ['input', 'greeting', 'output'])
          for (const p of f.pages.filter((x) => x.is_active && x.page_kind === kind))
            for (const m of p.messages) hash.update(`${m.id}\u0000${m.content}\u0000`);
      const inspect = await get(`/temporary-conversations/${c.id}/inspect`);
      expect(inspect.body.data.source_snapshot).toEqual({
        digest: `sha256:${hash.digest('hex')}`,
        source_session_id: source.id,
      });

      const logs = await operationLogsOf(t, c.id);
      expect(logs.map((l) => l.action)).toContain('temporary_conversation.create');
    });

    it('copies the source session bindings into the conversation session', async () => {
      const bound = await createSession(t, {
        body: { title: 'Bound', character_id: null, preset_id: null },
      });
      const c = await createTemporary(t, { sessionId: bound.id });
      const row = await t.resources.database.db
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', c.id)
        .executeTakeFirstOrThrow();
      const src = (await findSessionRow(t, bound.id))!;
      expect(row).toMatchObject({
        kind: 'temporary',
        project_id: src.project_id,
        character_id: src.character_id,
        character_version_id: src.character_version_id,
        user_card_id: src.user_card_id,
        preset_id: src.preset_id,
        worldbook_ids: src.worldbook_ids,
        regex_profile_id: src.regex_profile_id,
      });
    });

    it('from a Project: no source session, no digest', async () => {
      const res = await post(`/projects/${source.projectId}/temporary-conversations`, { title: 'P' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        source_session_id: null,
        project_id: source.projectId,
        status: 'active',
      });
      const inspect = await get(`/temporary-conversations/${res.body.data.id}/inspect`);
      expect(inspect.body.data.source_snapshot).toEqual({ digest: null, source_session_id: null });
    });

    it('retention: ttl sets expires_at, keep_for_debug, and the error codes', async () => {
      const ttl = await fromSession({ retention_policy: 'ttl', ttl_seconds: 60 });
      expect(ttl.status).toBe(201);
      expect(ttl.body.data.expires_at).toBe(ttl.body.data.created_at + 60_000);
      expect((await fromSession({ retention_policy: 'ttl', ttl_seconds: 1 })).status).toBe(201);
      expect((await fromSession({ retention_policy: 'ttl', ttl_seconds: 86_400 })).status).toBe(201);
      const keep = await fromSession({ retention_policy: 'keep_for_debug' });
      expect(keep.body.data).toMatchObject({ retention_policy: 'keep_for_debug', expires_at: null });

      const code = async (body: Record<string, unknown>) => {
        const res = await fromSession(body);
        expect(res.status).toBe(400);
        return res.body.error.code;
      };
      expect(await code({ retention_policy: 'forever' })).toBe('invalid_retention_policy');
      expect(await code({ retention_policy: 7 })).toBe('invalid_retention_policy');
      expect(await code({ retention_policy: 'ttl' })).toBe('ttl_required');
      expect(await code({ retention_policy: 'ttl', ttl_seconds: 0 })).toBe('invalid_ttl_seconds');
      expect(await code({ retention_policy: 'ttl', ttl_seconds: 86_401 })).toBe('invalid_ttl_seconds');
      expect(await code({ retention_policy: 'ttl', ttl_seconds: 1.5 })).toBe('invalid_ttl_seconds');
      expect(await code({ retention_policy: 'ttl', ttl_seconds: '60' })).toBe('invalid_ttl_seconds');
      expect(await code({ ttl_seconds: 60 })).toBe('invalid_ttl_seconds');
      expect(await code({ retention_policy: 'keep_for_debug', ttl_seconds: 60 })).toBe('invalid_ttl_seconds');
    });

    it('limits: title 1-200, purpose 1-120; unknown fields are refused', async () => {
      expect((await fromSession({ title: 'x'.repeat(200), purpose: 'p'.repeat(120) })).status).toBe(201);
      for (const body of [
        { title: 'x'.repeat(201) },
        { purpose: 'p'.repeat(121) },
        { title: '' },
        { purpose: '' },
        { title: 5 },
        { colour: 'red' },
      ]) {
        const res = await fromSession(body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
      }
    });

    it('404 source_session_not_found, project_not_found, source_project_not_found', async () => {
      const theirs = await createSession(t, { apiKey: stranger.apiKey });
      const temp = await createTemporary(t, { sessionId: source.id });
      for (const id of ['ses_missing', theirs.id, temp.id]) {
        const res = await post(`/sessions/${id}/temporary-conversations`);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('source_session_not_found');
      }
      for (const id of ['prj_missing', theirs.projectId]) {
        const res = await post(`/projects/${id}/temporary-conversations`);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('project_not_found');
      }
      await expect(createInternalTemporary(t, { project_id: 'prj_missing' })).rejects.toMatchObject({
        code: 'source_project_not_found',
        status: 404,
      });
      await expect(createInternalTemporary(t, { session_id: 'ses_missing' })).rejects.toMatchObject({
        code: 'source_session_not_found',
      });
    });

    it('403 project_access_denied for observers and derivers', async () => {
      for (const caller of [observer, deriver]) {
        const a = await fromSession({}, caller.apiKey);
        expect(a.status).toBe(403);
        expect(a.body.error.code).toBe('project_access_denied');
        const b = await post(`/projects/${source.projectId}/temporary-conversations`, {}, caller.apiKey);
        expect(b.status).toBe(403);
        expect(b.body.error.code).toBe('project_access_denied');
      }
    });
  });

  describe('get, messages, transcript', () => {
    it('appends messages as committed floors and reads them back in the transcript', async () => {
      const c = await createTemporary(t, { sessionId: source.id }, { title: 'Msgs' });
      const res = await post(`/temporary-conversations/${c.id}/messages`, {
        role: 'system',
        content: 'Be brief.',
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ conversation_id: c.id, seq: expect.any(Number), role: 'system' });
      expect(Object.keys(res.body.data).sort()).toEqual(
        ['conversation_id', 'floor_id', 'message_id', 'page_id', 'role', 'seq'].sort(),
      );
      await appendMessage(t, c.id, 'user', 'Hello');
      await appendMessage(t, c.id, 'assistant', 'Hi!');
      expect(fake.requests).toHaveLength(0); // no generation

      const transcript = await get(`/temporary-conversations/${c.id}/transcript`);
      expect(transcript.status).toBe(200);
      const floors = transcript.body.data.floors;
      expect(floors.map((f: { floor_no: number }) => f.floor_no)).toEqual([0, 1, 2]);
      expect(floors[0]).toMatchObject({
        id: res.body.data.floor_id,
        branch_id: 'main',
        state: 'committed',
        reasoning_text: null,
      });
      expect(floors[0].pages).toHaveLength(1);
      expect(floors[0].pages[0]).toMatchObject({ id: res.body.data.page_id, is_active: true, version: 1 });
      expect(
        floors.map((f: { pages: Array<{ messages: Array<{ role: string; content: string }> }> }) => [
          f.pages[0].messages[0].role,
          f.pages[0].messages[0].content,
        ]),
      ).toEqual([
        ['system', 'Be brief.'],
        ['user', 'Hello'],
        ['assistant', 'Hi!'],
      ]);
      const message = floors[0].pages[0].messages[0];
      expect(Object.keys(message).sort()).toEqual(
        ['content', 'content_format', 'created_at', 'id', 'is_hidden', 'role', 'seq', 'source'].sort(),
      );

      const detail = await get(`/temporary-conversations/${c.id}`);
      expect(detail.status).toBe(200);
      expect(detail.body.data.last_activity_at).toBeGreaterThanOrEqual(c.last_activity_at as number);
      expect(detail.body.data.floors).toBeUndefined();

      const actions = (await operationLogsOf(t, c.id)).map((l) => l.action);
      expect(actions.filter((a) => a === 'temporary_conversation.append_message')).toHaveLength(3);
    });

    it('400 invalid_message_role and empty_message_content', async () => {
      const c = await createTemporary(t, { sessionId: source.id });
      for (const body of [
        { role: 'tool', content: 'x' },
        { role: 'narrator', content: 'x' },
        { content: 'x' },
      ]) {
        const res = await post(`/temporary-conversations/${c.id}/messages`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('invalid_message_role');
      }
      for (const body of [
        { role: 'user', content: '' },
        { role: 'user', content: '   ' },
        { role: 'user' },
      ]) {
        const res = await post(`/temporary-conversations/${c.id}/messages`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('empty_message_content');
      }
      const extra = await post(`/temporary-conversations/${c.id}/messages`, {
        role: 'user',
        content: 'x',
        seq: 3,
      });
      expect(extra.status).toBe(400);
      expect(extra.body.error.code).toBe('validation_error');
    });

    it('another account, a missing id and an internal conversation answer 404 conversation_not_found', async () => {
      const c = await createTemporary(t, { sessionId: source.id });
      const internal = await createInternalTemporary(t, { session_id: source.id });
      const checks: Array<[string, string, string]> = [
        ['GET', `/temporary-conversations/${c.id}`, stranger.apiKey],
        ['GET', `/temporary-conversations/${c.id}/transcript`, stranger.apiKey],
        ['GET', `/temporary-conversations/${c.id}/inspect`, stranger.apiKey],
        ['POST', `/temporary-conversations/${c.id}/messages`, stranger.apiKey],
        ['POST', `/temporary-conversations/${c.id}/finalize`, stranger.apiKey],
        ['GET', `/temporary-conversations/ses_missing`, ADMIN_KEY],
        ['GET', `/temporary-conversations/${source.id}`, ADMIN_KEY],
        ['GET', `/temporary-conversations/${internal.session_id}`, ADMIN_KEY],
        ['GET', `/temporary-conversations/${internal.session_id}/transcript`, ADMIN_KEY],
        ['POST', `/temporary-conversations/${internal.session_id}/messages`, ADMIN_KEY],
        ['POST', `/temporary-conversations/${internal.session_id}/respond`, ADMIN_KEY],
        ['POST', `/temporary-conversations/${internal.session_id}/discard`, ADMIN_KEY],
        ['POST', `/temporary-conversations/${internal.session_id}/export`, ADMIN_KEY],
      ];
      const bodies: Record<string, Record<string, unknown>> = {
        messages: { role: 'user', content: 'x' },
        export: { target: 'page_staged_write', target_page_id: 'pg_x', reason: 'r' },
      };
      for (const [method, path, key] of checks) {
        const res =
          method === 'GET'
            ? await get(path, key)
            : await post(path, bodies[path.split('/').pop()!] ?? {}, key);
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
          path,
          status: 404,
          code: 'conversation_not_found',
        });
      }
    });

    it('observers and derivers read but get 403 project_access_denied on every write', async () => {
      const c = await createTemporary(t, { sessionId: source.id });
      for (const caller of [observer, deriver]) {
        expect((await get(`/temporary-conversations/${c.id}`, caller.apiKey)).status).toBe(200);
        expect((await get(`/temporary-conversations/${c.id}/transcript`, caller.apiKey)).status).toBe(200);
        expect((await get(`/temporary-conversations/${c.id}/inspect`, caller.apiKey)).status).toBe(200);
        const writes: Array<[string, Record<string, unknown>]> = [
          ['messages', { role: 'user', content: 'x' }],
          ['respond', { input_message: { role: 'user', content: 'x' } }],
          ['retry', { floor_id: 'flr_x' }],
          ['retry-step', { floor_id: 'flr_x', from_step_index: 1 }],
          ['export', { target: 'page_staged_write', target_page_id: 'pg_x', reason: 'r' }],
          ['finalize', {}],
          ['discard', {}],
          ['cancel', {}],
        ];
        for (const [route, body] of writes) {
          const res = await post(`/temporary-conversations/${c.id}/${route}`, body, caller.apiKey);
          expect({ route, status: res.status, code: res.body.error?.code }).toEqual({
            route,
            status: 403,
            code: 'project_access_denied',
          });
        }
      }
      expect(fake.requests).toHaveLength(0);
    });

    it('409 project_archived on every route once the Project is archived', async () => {
      const own = await createSession(t, { body: { title: 'To archive' } });
      const c = await createTemporary(t, { sessionId: own.id });
      await archiveProject(t, own.projectId);
      for (const res of [
        await get(`/temporary-conversations/${c.id}`),
        await get(`/temporary-conversations/${c.id}/transcript`),
        await get(`/temporary-conversations/${c.id}/inspect`),
        await post(`/temporary-conversations/${c.id}/messages`, { role: 'user', content: 'x' }),
        await post(`/temporary-conversations/${c.id}/respond`, {
          input_message: { role: 'user', content: 'x' },
        }),
        await post(`/temporary-conversations/${c.id}/finalize`),
        await post(`/sessions/${own.id}/temporary-conversations`),
        await post(`/projects/${own.projectId}/temporary-conversations`),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('project_archived');
      }
    });
  });

  describe('terminal routes and expiry', () => {
    it.each([
      ['finalize', 'finalized', 'finalized_at'],
      ['discard', 'discarded', 'discarded_at'],
      ['cancel', 'cancelled', 'cancelled_at'],
    ])('%s: active → %s, then every active-only route answers 409', async (route, status, field) => {
      const c = await createTemporary(t, { sessionId: source.id });
      await appendMessage(t, c.id, 'user', 'Hello');
      const res = await post(`/temporary-conversations/${c.id}/${route}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: c.id, status });
      expect(res.body.data[field]).toEqual(expect.any(Number));
      for (const other of ['finalized_at', 'discarded_at', 'cancelled_at'].filter((f) => f !== field))
        expect(res.body.data[other]).toBeNull();

      for (const again of ['finalize', 'discard', 'cancel']) {
        const r = await post(`/temporary-conversations/${c.id}/${again}`);
        expect(r.status).toBe(409);
        expect(r.body.error.code).toBe('conversation_not_active');
      }
      for (const r of [
        await post(`/temporary-conversations/${c.id}/messages`, { role: 'user', content: 'x' }),
        await post(`/temporary-conversations/${c.id}/respond`, {}),
        await post(`/temporary-conversations/${c.id}/retry`, { floor_id: 'flr_x' }),
        await get(`/temporary-conversations/${c.id}/transcript`),
        await post(`/temporary-conversations/${c.id}/export`, {
          target: 'page_staged_write',
          target_page_id: 'pg_x',
          reason: 'r',
        }),
      ]) {
        expect(r.status).toBe(409);
        expect(r.body.error.code).toBe('conversation_not_active');
      }
      // GET and inspect still answer.
      expect((await get(`/temporary-conversations/${c.id}`)).body.data.status).toBe(status);
      expect((await get(`/temporary-conversations/${c.id}/inspect`)).status).toBe(200);
      const actions = (await operationLogsOf(t, c.id)).map((l) => l.action);
      expect(actions).toContain(`temporary_conversation.${route}`);
    });

    it('lazy expiry: a ttl conversation past expires_at reads as expired and refuses writes', async () => {
      const c = await createTemporary(
        t,
        { sessionId: source.id },
        { retention_policy: 'ttl', ttl_seconds: 3600 },
      );
      await appendMessage(t, c.id, 'user', 'Before');
      await expireNow(t, c.id);
      const write = await post(`/temporary-conversations/${c.id}/messages`, {
        role: 'user',
        content: 'After',
      });
      expect(write.status).toBe(409);
      expect(write.body.error.code).toBe('conversation_not_active');
      const detail = await get(`/temporary-conversations/${c.id}`);
      expect(detail.status).toBe(200);
      expect(detail.body.data.status).toBe('expired');
      expect((await conversationRow(t, c.id))!.expired_at).toEqual(expect.any(Number));
      const r = await post(`/temporary-conversations/${c.id}/finalize`);
      expect(r.body.error.code).toBe('conversation_not_active');
      const logs = (await operationLogsOf(t, c.id)).filter(
        (l) => l.action === 'temporary_conversation.expire',
      );
      expect(logs).toHaveLength(1);
      expect(logs[0].metadata).toMatchObject({ trigger: 'lazy' });
    });

    it('a GET as the first touch after expiry moves it too', async () => {
      const c = await createTemporary(
        t,
        { projectId: source.projectId },
        { retention_policy: 'ttl', ttl_seconds: 5 },
      );
      await expireNow(t, c.id);
      expect((await conversationRow(t, c.id))!.status).toBe('active');
      expect((await get(`/temporary-conversations/${c.id}`)).body.data.status).toBe('expired');
      expect((await conversationRow(t, c.id))!.status).toBe('expired');
    });
  });

  describe('hidden from normal session routes', () => {
    it('every family of session routes answers 404 for a temporary conversation', async () => {
      const c = await createTemporary(t, { sessionId: source.id });
      const {
        floor_id: floorId,
        page_id: pageId,
        message_id: messageId,
      } = await appendMessage(t, c.id, 'user', 'Hi');
      const checks: Array<[string, string, Record<string, unknown>?]> = [
        ['GET', `/sessions/${c.id}`],
        ['PATCH', `/sessions/${c.id}`, { title: 'x' }],
        ['DELETE', `/sessions/${c.id}`],
        ['GET', `/sessions/${c.id}/scope`],
        ['GET', `/sessions/${c.id}/floors`],
        ['GET', `/sessions/${c.id}/branches`],
        ['GET', `/sessions/${c.id}/operation-logs`],
        ['POST', `/sessions/${c.id}/respond`, { message: 'x' }],
        ['POST', `/sessions/${c.id}/respond/dry-run`, { message: 'x' }],
        ['POST', `/sessions/${c.id}/regenerate`, {}],
        ['GET', `/sessions/${c.id}/prompt-runtime/policy`],
        ['GET', `/sessions/${c.id}/prompt-runtime/injections`],
        ['GET', `/floors/${floorId}`],
        ['POST', `/floors/${floorId}/branch`, {}],
        ['POST', `/floors/${floorId}/retry`, {}],
        ['GET', `/floors/${floorId}/operation-logs`],
        ['POST', `/pages/${pageId}/activate`, {}],
        ['POST', `/messages/${messageId}/edit-and-regenerate`, { content: 'y' }],
        ['GET', `/variables/resolve?session_id=${c.id}`],
        ['GET', `/projects/${source.projectId}/events?session_id=${c.id}`],
      ];
      for (const [method, path, body] of checks) {
        const req =
          method === 'GET'
            ? t.http.get(path)
            : method === 'PATCH'
              ? t.http.patch(path).send(body ?? {})
              : method === 'DELETE'
                ? t.http.delete(path)
                : t.http.post(path).send(body ?? {});
        const res = await req.set('x-api-key', ADMIN_KEY);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      }
      expect(fake.requests).toHaveLength(0);
      // Still there.
      expect((await get(`/temporary-conversations/${c.id}`)).status).toBe(200);

      const list = await get(`/sessions?limit=100`);
      expect(list.status).toBe(200);
      expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(c.id);
      const projectSessions = await get(`/projects/${source.projectId}/sessions`);
      expect(projectSessions.status).toBe(200);
      expect(projectSessions.body.items.map((s: { id: string }) => s.id)).not.toContain(c.id);
      expect(projectSessions.body.items.map((s: { id: string }) => s.id)).toContain(source.id);
    });
  });
});
