import { importCharacter } from '../support/factories/characters';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { SseCall, startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

/**
 * Spec 2 conformance points found by the spec audit: the chat routes' code for a missing session
 * (`not_found`, spec 2 "Errors"), `main` as the name of a session's default branch wherever a route
 * takes a session branch, and the dry-run body accepting the respond fields other than
 * `session_state_writes`.
 */
describe('spec 2 conformance', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let other: Caller;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const call = (
    method: 'get' | 'post' | 'put' | 'patch' | 'delete',
    path: string,
    body?: object,
    key = ADMIN_KEY,
  ) => {
    const req = t.http[method](path).set('x-api-key', key);
    return body === undefined ? req : req.send(body);
  };

  /** A session whose `main` branch holds one committed turn. */
  async function chatWithOneTurn() {
    const session = await createSession(t);
    fake.script({ reply: 'First reply' });
    const res = await call('post', `/sessions/${session.id}/respond`, { message: 'Hello' });
    expect(res.status).toBe(200);
    const branches = await call('get', `/sessions/${session.id}/branches`);
    const main = branches.body.data.find((b: { name: string }) => b.name === 'main');
    fake.reset();
    return { session, turn: res.body.data, mainId: main.id as string };
  }

  describe('chat routes: a missing session is 404 not_found', () => {
    it('respond, respond/stream, dry-run and regenerate, for a missing session and another account’s', async () => {
      const { session } = await chatWithOneTurn();
      const routes: Array<[string, object]> = [
        ['respond', { message: 'x' }],
        ['respond/stream', { message: 'x' }],
        ['respond/dry-run', { message: 'x' }],
        ['regenerate', {}],
      ];
      for (const [route, body] of routes) {
        for (const [id, key] of [
          ['ses_missing', ADMIN_KEY],
          [session.id, other.apiKey],
        ]) {
          const res = await call('post', `/sessions/${id}/${route}`, body, key);
          expect([route, res.status, res.body.error?.code]).toEqual([route, 404, 'not_found']);
          expect(JSON.stringify(res.body)).not.toContain('First reply');
        }
      }
      expect(fake.requests).toHaveLength(0);
    });

    it('the SSE route refuses before streaming with the same code', async () => {
      const sse = await SseCall.open(t, 'POST', '/sessions/ses_missing/respond/stream', { message: 'x' });
      await sse.waitForEnd();
      expect(sse.status).toBe(404);
      expect(JSON.parse(sse.body).error.code).toBe('not_found');
    });

    it('the /prompt-runtime reads keep session_not_found, the code of that route family', async () => {
      for (const [path, body] of [
        ['/sessions/ses_missing/prompt-runtime/preview', { text: 'x' }],
        ['/sessions/ses_missing/prompt-runtime/inspect', { message: 'x' }],
      ] as const) {
        const res = await call('post', path, body);
        expect([path, res.status, res.body.error.code]).toEqual([path, 404, 'session_not_found']);
      }
    });
  });

  describe('`main` names a session’s default branch', () => {
    it('variables: upsert with session_id + branch_id main, or scope_id <session>:main, writes the main branch host', async () => {
      const session = await createSession(t);
      const mainId = (await call('get', `/sessions/${session.id}/branches`)).body.data[0].id as string;
      const first = await call('put', '/variables', {
        scope: 'branch',
        session_id: session.id,
        branch_id: 'main',
        key: 'mood',
        value: 'calm',
      });
      expect(first.status).toBe(201);
      expect(first.body.data).toMatchObject({
        scope: 'branch',
        scope_id: `${session.id}:${mainId}`,
        scope_ref: { session_id: session.id, branch_id: mainId },
        key: 'mood',
        value: 'calm',
      });
      // The same host by its internal scope_id with the name, and by id: one variable.
      const second = await call('put', '/variables', {
        scope: 'branch',
        scope_id: `${session.id}:main`,
        key: 'mood',
        value: 'angry',
      });
      expect(second.status).toBe(200);
      expect(second.body.data.id).toBe(first.body.data.id);
      const byId = await call('put', '/variables', {
        scope: 'branch',
        session_id: session.id,
        branch_id: mainId,
        key: 'mood',
        value: 'happy',
      });
      expect([byId.status, byId.body.data.id]).toEqual([200, first.body.data.id]);

      const list = await call('get', `/variables?scope=branch&session_id=${session.id}&branch_id=main`);
      expect(list.status).toBe(200);
      expect(list.body.data.map((v: { id: string }) => v.id)).toEqual([first.body.data.id]);
      const byScopeId = await call(
        'get',
        `/variables?scope=branch&scope_id=${encodeURIComponent(`${session.id}:main`)}`,
      );
      expect(byScopeId.body.data.map((v: { id: string }) => v.id)).toEqual([first.body.data.id]);

      const resolved = await call('get', `/variables/resolve?session_id=${session.id}&branch_id=main`);
      expect(resolved.status).toBe(200);
      expect(resolved.body.data.context.branch_id).toBe(mainId);
      expect(resolved.body.data.resolved).toEqual([
        expect.objectContaining({ key: 'mood', value: 'happy', source_scope: 'branch' }),
      ]);
    });

    it('variables: a batch naming main and the same branch by id is a duplicate target; another account’s session stays 404', async () => {
      const session = await createSession(t);
      const mainId = (await call('get', `/sessions/${session.id}/branches`)).body.data[0].id as string;
      const dup = await call('put', '/variables/batch', {
        items: [
          { scope: 'branch', session_id: session.id, branch_id: 'main', key: 'k', value: 1 },
          { scope: 'branch', session_id: session.id, branch_id: mainId, key: 'k', value: 2 },
        ],
      });
      expect([dup.status, dup.body.error.code]).toEqual([400, 'variable_batch_duplicate_target']);
      const ok = await call('put', '/variables/batch', {
        items: [{ scope: 'branch', session_id: session.id, branch_id: 'main', key: 'k', value: 1 }],
      });
      expect(ok.status).toBe(200);
      expect(ok.body.data.results[0].data.scope_ref).toEqual({ session_id: session.id, branch_id: mainId });

      const foreign = await call(
        'put',
        '/variables',
        { scope: 'branch', session_id: session.id, branch_id: 'main', key: 'k', value: 1 },
        other.apiKey,
      );
      expect([foreign.status, foreign.body.error.code]).toEqual([404, 'variable_host_not_found']);
      const foreignResolve = await call(
        'get',
        `/variables/resolve?session_id=${session.id}&branch_id=main`,
        undefined,
        other.apiKey,
      );
      expect(foreignResolve.status).toBe(404);
    });

    it('prompt runtime branch policy and injection routes accept main once it has floors', async () => {
      const empty = await createSession(t);
      const none = await call('get', `/sessions/${empty.id}/prompt-runtime/branches/main/policy`);
      expect([none.status, none.body.error.code]).toEqual([404, 'branch_not_found']);

      const { session, mainId } = await chatWithOneTurn();
      const base = `/sessions/${session.id}/prompt-runtime/branches/main`;
      const patched = await call('patch', `${base}/policy`, { delivery: { require_last_user: true } });
      expect(patched.status).toBe(200);
      expect(patched.body.data.persistent_policy).toEqual({ delivery: { require_last_user: true } });
      const byId = await call('get', `/sessions/${session.id}/prompt-runtime/branches/${mainId}/policy`);
      expect(byId.body.data.persistent_policy).toEqual({ delivery: { require_last_user: true } });

      const created = await call('post', `${base}/injections`, {
        source_kind: 'client_injection',
        title: 'Note',
        content: 'Remember the lighthouse.',
        placement: 'before_history',
      });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ scope: 'branch', branch_id: mainId });
      const listed = await call('get', `${base}/injections`);
      expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([created.body.data.id]);
      const changed = await call('patch', `${base}/injections/${created.body.data.id}`, { enabled: false });
      expect([changed.status, changed.body.data.enabled]).toEqual([200, false]);
      const deleted = await call('delete', `${base}/injections/${created.body.data.id}`);
      expect([deleted.status, deleted.body.data.id]).toEqual([200, created.body.data.id]);

      const foreign = await call('get', `${base}/policy`, undefined, other.apiKey);
      expect([foreign.status, foreign.body.error.code]).toEqual([404, 'session_not_found']);
    });

    it('the transcript (branch_id=main) and the branch reset route accept main', async () => {
      const { session, turn } = await chatWithOneTurn();
      fake.script({ reply: 'Second reply' });
      expect((await call('post', `/sessions/${session.id}/respond`, { message: 'Again' })).status).toBe(200);
      const floors = await call('get', `/sessions/${session.id}/floors?branch_id=main`);
      expect(floors.status).toBe(200);
      expect(floors.body.data.map((f: { floor_no: number }) => f.floor_no)).toEqual([0, 1]);

      const reset = await call('post', `/sessions/${session.id}/branches/main/reset`, {
        floor_id: turn.floor_id,
      });
      expect(reset.status).toBe(200);
      expect(reset.body.data).toMatchObject({ name: 'main', head_floor_id: turn.floor_id });
    });
  });

  describe('dry-run takes the respond body except session_state_writes', () => {
    it('accepts generation_params and config, checks generation_params like respond', async () => {
      const { session } = await chatWithOneTurn();
      const url = `/sessions/${session.id}/respond/dry-run`;
      const ok = await call('post', url, {
        message: 'Hi',
        config: {},
        generation_params: { temperature: 0.7, max_output_tokens: 200, max_context_tokens: 4000 },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.data.messages.at(-1)).toEqual({ role: 'user', content: 'Hi' });

      const bad = await call('post', url, { message: 'Hi', generation_params: { temperature: 5 } });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_error']);
      const stateWrites = await call('post', url, { message: 'Hi', session_state_writes: [] });
      expect([stateWrites.status, stateWrites.body.error.code]).toEqual([400, 'validation_error']);
      expect(fake.requests).toHaveLength(0);
    });

    it('max_context_tokens and max_output_tokens shape the budget of dry-run and of inspect (which takes its body)', async () => {
      const { session } = await chatWithOneTurn();
      const body = { message: 'Hi', generation_params: { max_output_tokens: 200, max_context_tokens: 4000 } };
      const expected = {
        max_input_tokens: 4000,
        reserved_completion_tokens: 200,
        source: 'generation_params',
      };
      const dry = await call('post', `/sessions/${session.id}/respond/dry-run`, body);
      expect(dry.status).toBe(200);
      expect(dry.body.data.runtime_trace.budgets).toMatchObject(expected);
      const inspected = await call('post', `/sessions/${session.id}/prompt-runtime/inspect`, body);
      expect(inspected.status).toBe(200);
      expect(inspected.body.data.runtime_trace.budgets).toMatchObject(expected);
      // Without them both fall back to the same default budget.
      const plainDry = await call('post', `/sessions/${session.id}/respond/dry-run`, { message: 'Hi' });
      const plainInspect = await call('post', `/sessions/${session.id}/prompt-runtime/inspect`, {
        message: 'Hi',
      });
      expect(plainDry.body.data.runtime_trace.budgets.source).not.toBe('generation_params');
      expect(plainInspect.body.data.runtime_trace.budgets).toEqual(plainDry.body.data.runtime_trace.budgets);
      expect(fake.requests).toHaveLength(0);
    });

    it('the token bounds at and past their minimum (1), on dry-run and inspect', async () => {
      const { session } = await chatWithOneTurn();
      for (const url of [
        `/sessions/${session.id}/respond/dry-run`,
        `/sessions/${session.id}/prompt-runtime/inspect`,
      ]) {
        const atMin = await call('post', url, {
          message: 'Hi',
          generation_params: { max_output_tokens: 1, max_context_tokens: 1 },
        });
        expect([url, atMin.status]).toEqual([url, 200]);
        expect(atMin.body.data.runtime_trace.budgets).toMatchObject({
          max_input_tokens: 1,
          reserved_completion_tokens: 1,
        });
        for (const field of ['max_output_tokens', 'max_context_tokens']) {
          const past = await call('post', url, { message: 'Hi', generation_params: { [field]: 0 } });
          expect([url, field, past.status, past.body.error.code]).toEqual([
            url,
            field,
            400,
            'validation_error',
          ]);
        }
      }
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('preview on a branch not materialised yet reads the source floor’s local snapshot', () => {
    const preview = (sessionId: string, body: object) =>
      call('post', `/sessions/${sessionId}/prompt-runtime/preview`, body);

    it('inherits the exact snapshot, not later durable values; 409 branch_local_snapshot_missing without one', async () => {
      const { session, turn } = await chatWithOneTurn();
      const later = await call('put', '/variables', {
        scope: 'chat',
        scope_id: session.id,
        key: 'mood',
        value: 'later',
      });
      expect(later.status).toBe(201);
      const fork = await call('post', `/floors/${turn.floor_id}/branch`, {});
      expect(fork.status).toBe(201);
      const branchId = fork.body.data.branch_id as string;
      const text = '[{{getvar::mood}}]';

      const onFork = await preview(session.id, { text, branch_id: branchId, source_floor_id: turn.floor_id });
      expect(onFork.status).toBe(200);
      expect(onFork.body.data.expanded_text).toBe('[]');
      // A materialised branch (main) reads the durable values.
      const onMain = await preview(session.id, { text, branch_id: 'main', source_floor_id: turn.floor_id });
      expect(onMain.body.data.expanded_text).toBe('[later]');
      const onForkHead = await preview(session.id, { text, branch_id: branchId });
      expect(onForkHead.body.data.expanded_text).toBe('[later]');

      await t.resources.database.db
        .deleteFrom('floor_variable_snapshots')
        .where('floor_id', '=', turn.floor_id)
        .execute();
      const missing = await preview(session.id, {
        text,
        branch_id: branchId,
        source_floor_id: turn.floor_id,
      });
      expect([missing.status, missing.body.error.code]).toEqual([409, 'branch_local_snapshot_missing']);
    });

    it('a greeting floor has an (empty) snapshot, so a branch from it previews', async () => {
      const character = await importCharacter(t);
      const session = await createSession(t, { body: { character_id: character.id } });
      const floors = await call('get', `/sessions/${session.id}/floors`);
      const greeting = floors.body.data[0];
      expect(greeting.floor_no).toBe(0);
      const fork = await call('post', `/floors/${greeting.id}/branch`, {});
      const res = await preview(session.id, {
        text: '[{{getvar::mood}}]',
        branch_id: fork.body.data.branch_id,
        source_floor_id: greeting.id,
      });
      expect([res.status, res.body.data?.expanded_text]).toEqual([200, '[]']);
    });
  });

  describe('edit-and-regenerate takes the new text as content or message', () => {
    it('message is an alias of content; both or neither is 400', async () => {
      const { session, turn } = await chatWithOneTurn();
      const floors = await call('get', `/sessions/${session.id}/floors`);
      const floor = floors.body.data.find((f: { id: string }) => f.id === turn.floor_id);
      const input = floor.pages.find(
        (p: { page_kind: string; is_active: boolean }) => p.page_kind === 'input',
      );
      const messageId = input.messages[0].id as string;
      const url = `/messages/${messageId}/edit-and-regenerate`;

      const both = await call('post', url, { content: 'A', message: 'B' });
      expect([both.status, both.body.error.code]).toEqual([400, 'validation_error']);
      const neither = await call('post', url, {});
      expect([neither.status, neither.body.error.code]).toEqual([400, 'validation_error']);
      const blank = await call('post', url, { message: '   ' });
      expect([blank.status, blank.body.error.code]).toEqual([400, 'validation_error']);
      const tooLong = await call('post', url, { message: 'a'.repeat(200_001) });
      expect([tooLong.status, tooLong.body.error.code]).toEqual([400, 'validation_error']);
      const nullText = await call('post', url, { message: null });
      expect([nullText.status, nullText.body.error.code]).toEqual([400, 'validation_error']);
      expect(fake.requests).toHaveLength(0);

      fake.script({ reply: 'Edited reply' });
      const res = await call('post', url, { message: 'Hello again' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ floor_id: turn.floor_id, generated_text: 'Edited reply' });
      expect(fake.requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'Hello again' });
    });

    it('a message of exactly 200,000 characters is accepted and stored whole', async () => {
      const { session, turn } = await chatWithOneTurn();
      const floors = await call('get', `/sessions/${session.id}/floors`);
      const floor = floors.body.data.find((f: { id: string }) => f.id === turn.floor_id);
      const input = floor.pages.find(
        (p: { page_kind: string; is_active: boolean }) => p.page_kind === 'input',
      );
      const messageId = input.messages[0].id as string;
      const atLimit = 'word '.repeat(40_000);
      expect(atLimit).toHaveLength(200_000);

      fake.script({ reply: 'Long reply' });
      const res = await call('post', `/messages/${messageId}/edit-and-regenerate`, {
        message: atLimit,
        generation_params: { max_context_tokens: 1_000_000 },
      });
      expect(res.status).toBe(200);
      expect(fake.requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: atLimit });
      const after = await call('get', `/sessions/${session.id}/floors`);
      const edited = after.body.data.find((f: { id: string }) => f.id === turn.floor_id);
      const activeInput = edited.pages.find(
        (p: { page_kind: string; is_active: boolean }) => p.page_kind === 'input' && p.is_active,
      );
      expect(activeInput.messages[0].content).toBe(atLimit);
    });
  });
});
