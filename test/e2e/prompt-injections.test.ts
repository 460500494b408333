import { operationLogsRepository, promptRuntimeRepository, type SessionRow } from '@hearth/persistence';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, findProject } from '../support/factories/projects';
import {
  emptyBranch,
  expireInjection,
  fillInjections,
  injectionRows,
  materialisedBranch,
  materialisedMain,
} from '../support/factories/prompt-runtime';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(120_000);

const BODY = {
  source_kind: 'client_injection',
  title: 'Reminder',
  content: 'Keep the tone light.',
  placement: 'after_history',
};

describe('persistent prompt injection routes', () => {
  let t: TestApp;
  let other: Caller;
  let observer: Caller;

  const db = () => t.resources.database.db;
  const newSession = async (): Promise<SessionRow> => (await findSessionRow(t, (await createSession(t)).id))!;
  const base = (s: { id: string }, branchId?: string | null) =>
    branchId
      ? `/sessions/${s.id}/prompt-runtime/branches/${branchId}/injections`
      : `/sessions/${s.id}/prompt-runtime/injections`;
  const post = (url: string, body: unknown, key = ADMIN_KEY) =>
    t.http
      .post(url)
      .set('x-api-key', key)
      .send(body as object);
  const patch = (url: string, body: unknown, key = ADMIN_KEY) =>
    t.http
      .patch(url)
      .set('x-api-key', key)
      .send(body as object);
  const get = (url: string, key = ADMIN_KEY) => t.http.get(url).set('x-api-key', key);
  const del = (url: string, key = ADMIN_KEY) => t.http.delete(url).set('x-api-key', key);
  const create = async (s: { id: string }, body: Record<string, unknown> = {}, branchId?: string | null) => {
    const res = await post(base(s, branchId), { ...BODY, ...body });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown> & { id: string; created_at: number };
  };
  const logsOf = async (sessionId: string, prefix = 'prompt_injection.') =>
    (
      await operationLogsRepository.list(
        db(),
        { accountId: 'default', filters: { session_id: sessionId } },
        { limit: 500, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.action.startsWith(prefix));
  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create and list', () => {
    it('creates with the defaults of spec 2 and logs lengths, never the text', async () => {
      const s = await newSession();
      const res = await post(base(s), BODY).expect(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^pinj_/),
        session_id: s.id,
        branch_id: null,
        scope: 'session',
        source_kind: 'client_injection',
        title: 'Reminder',
        content: 'Keep the tone light.',
        placement: 'after_history',
        placement_params: null,
        order: 100,
        enabled: true,
        mode_scope: null,
        ttl_ms: null,
        expires_at: null,
        created_by: 'default',
        created_at: expect.any(Number),
        updated_at: res.body.data.created_at,
      });
      const logs = await logsOf(s.id);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({
        action: 'prompt_injection.create',
        target_type: 'prompt_injection',
        target_id: res.body.data.id,
        session_id: s.id,
        project_id: s.project_id,
        branch_id: null,
        after_ref: { scope: 'session', placement: 'after_history', title_length: 8, content_length: 20 },
      });
      expect(JSON.stringify(logs[0])).not.toContain('Keep the tone');
      expect(JSON.stringify(logs[0])).not.toContain('Reminder');
    });

    it('stores every field given; ttl_ms sets expires_at = created_at + ttl_ms', async () => {
      const s = await newSession();
      const row = await create(s, {
        placement: 'before_floor_from_end',
        placement_params: { offset: 0, depth: 2 },
        order: -5,
        enabled: false,
        mode_scope: 'compat_plus',
        ttl_ms: 3_600_000,
      });
      expect(row).toMatchObject({
        placement: 'before_floor_from_end',
        placement_params: { offset: 0, depth: 2 },
        order: -5,
        enabled: false,
        mode_scope: 'compat_plus',
        ttl_ms: 3_600_000,
        expires_at: row.created_at + 3_600_000,
      });
      // An advanced placement without its parameter is stored (the engine reports it as not applied).
      expect(await create(s, { placement: 'before_floor' })).toMatchObject({ placement_params: null });
    });

    it('lists the scope oldest first, without expired records or other scopes', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      const a = await create(s, { title: 'a' });
      const b = await create(s, { title: 'b', ttl_ms: 1000 });
      const c = await create(s, { title: 'c' });
      const onBranch = await create(s, { title: 'branch' }, main.id);
      const res = await get(base(s)).expect(200);
      expect(res.body.data.map((i: { id: string }) => i.id)).toEqual([a.id, b.id, c.id]);
      expect(res.body.meta).toEqual({ total: 3 });
      await expireInjection(t, b.id);
      const after = await get(base(s)).expect(200);
      expect(after.body.data.map((i: { id: string }) => i.id)).toEqual([a.id, c.id]);
      const branch = await get(base(s, main.id)).expect(200);
      expect(branch.body.data.map((i: { id: string }) => i.id)).toEqual([onBranch.id]);
      expect(branch.body.data[0]).toMatchObject({ scope: 'branch', branch_id: main.id });
    });

    it.each([
      ['a missing source_kind', { source_kind: undefined }, 'source_kind'],
      ['another source_kind', { source_kind: 'agent_injection' }, 'source_kind'],
      ['a missing title', { title: undefined }, 'title'],
      ['an empty title', { title: '' }, 'title'],
      ['a 257-character title', { title: 'x'.repeat(257) }, 'title'],
      ['a missing content', { content: undefined }, 'content'],
      ['a blank content', { content: '   ' }, 'content'],
      ['an 8001-character content', { content: 'y'.repeat(8001) }, 'content'],
      ['a NUL in the content', { content: 'a\u0000b' }, 'content'],
      ['an unknown placement', { placement: 'in_the_middle' }, 'placement'],
      ['a missing placement', { placement: undefined }, 'placement'],
      ['a negative floor_no', { placement_params: { floor_no: -1 } }, 'placement_params'],
      ['an unknown placement parameter', { placement_params: { row: 1 } }, 'placement_params'],
      ['placement_params not an object', { placement_params: 3 }, 'placement_params'],
      ['a fractional order', { order: 1.5 }, 'order'],
      ['an order past 32 bits', { order: 2_147_483_648 }, 'order'],
      ['a string enabled', { enabled: 'true' }, 'enabled'],
      ['an unknown mode_scope', { mode_scope: 'compat' }, 'mode_scope'],
      ['a zero ttl_ms', { ttl_ms: 0 }, 'ttl_ms'],
      ['a ttl_ms past ten years', { ttl_ms: 315_360_000_001 }, 'ttl_ms'],
    ])('400 invalid_injection_payload for %s, nothing written', async (_name, change, field) => {
      const s = await newSession();
      const res = await post(base(s), { ...BODY, ...change }).expect(400);
      expect(res.body.error.code).toBe('invalid_injection_payload');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
      expect(await injectionRows(t, s.id)).toEqual([]);
      expect(await logsOf(s.id)).toEqual([]);
    });

    it('accepts the limits themselves: 256/8000 characters, 32-bit order, ten-year TTL', async () => {
      const s = await newSession();
      const row = await create(s, {
        title: 't'.repeat(256),
        content: 'c'.repeat(8000),
        order: 2_147_483_647,
        ttl_ms: 315_360_000_000,
      });
      expect(row).toMatchObject({ order: 2_147_483_647, ttl_ms: 315_360_000_000 });
      expect((row.title as string).length).toBe(256);
      expect((row.content as string).length).toBe(8000);
      expect(await create(s, { order: -2_147_483_648 })).toMatchObject({ order: -2_147_483_648 });
    });

    it('an unknown field is 400 invalid_injection_payload (the code of these routes), naming the field', async () => {
      const s = await newSession();
      const res = await post(base(s), { ...BODY, scope: 'request' }).expect(400);
      expect(res.body.error.code).toBe('invalid_injection_payload');
      expect(res.body.error.details.fields).toEqual([
        expect.objectContaining({ field: 'scope', problems: [expect.stringContaining('should not exist')] }),
      ]);
      expect(await injectionRows(t, s.id)).toEqual([]);
      const created = await create(s);
      const patched = await patch(`${base(s)}/${created.id}`, { title: 'x', colour: 'red' });
      expect([patched.status, patched.body.error.code]).toEqual([400, 'invalid_injection_payload']);
    });
  });

  describe('quota', () => {
    it('128 live records per scope; the 129th is 400 injection_scope_quota_exceeded', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      await fillInjections(t, s, 127);
      const last = await post(base(s), BODY).expect(201);
      const over = await post(base(s), BODY).expect(400);
      expect(over.body.error).toMatchObject({
        code: 'injection_scope_quota_exceeded',
        details: { scope: 'session', limit: 128 },
      });
      expect(await injectionRows(t, s.id)).toHaveLength(128);
      // The branch scope has its own quota.
      await fillInjections(t, s, 127, main.id);
      await post(base(s, main.id), BODY).expect(201);
      const branchOver = await post(base(s, main.id), BODY).expect(400);
      expect(branchOver.body.error).toMatchObject({
        code: 'injection_scope_quota_exceeded',
        details: { scope: 'branch', limit: 128 },
      });
      // A deleted or expired record frees its place.
      await del(`${base(s)}/${last.body.data.id}`).expect(200);
      const ttl = await post(base(s), { ...BODY, ttl_ms: 60_000 }).expect(201);
      await post(base(s), BODY).expect(400);
      await expireInjection(t, ttl.body.data.id);
      await post(base(s), BODY).expect(201);
    });

    it('parallel creates never overshoot the quota', async () => {
      const s = await newSession();
      await fillInjections(t, s, 120);
      const results = await Promise.all(Array.from({ length: 20 }, () => post(base(s), BODY)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((x) => x === 201)).toHaveLength(8);
      expect(statuses.filter((x) => x === 400)).toHaveLength(12);
      expect(
        results
          .filter((r) => r.status === 400)
          .every((r) => r.body.error.code === 'injection_scope_quota_exceeded'),
      ).toBe(true);
      expect(await injectionRows(t, s.id)).toHaveLength(128);
    });
  });

  describe('PATCH and DELETE', () => {
    it('PATCH changes the given fields, null clears placement_params, ttl_ms moves expires_at; logs lengths', async () => {
      const s = await newSession();
      const row = await create(s, { placement: 'after_floor', placement_params: { floor_no: 3 } });
      const res = await patch(`${base(s)}/${row.id}`, {
        title: 'New title',
        placement: 'before_history',
        placement_params: null,
        order: 7,
        enabled: false,
        mode_scope: 'native',
        ttl_ms: 5000,
      }).expect(200);
      expect(res.body.data).toMatchObject({
        id: row.id,
        title: 'New title',
        content: BODY.content,
        placement: 'before_history',
        placement_params: null,
        order: 7,
        enabled: false,
        mode_scope: 'native',
        ttl_ms: 5000,
        expires_at: row.created_at + 5000,
        created_at: row.created_at,
      });
      expect(res.body.data.updated_at).toBeGreaterThanOrEqual(row.created_at);
      const cleared = await patch(`${base(s)}/${row.id}`, { ttl_ms: null, mode_scope: null }).expect(200);
      expect(cleared.body.data).toMatchObject({ ttl_ms: null, expires_at: null, mode_scope: null });
      const withParams = await patch(`${base(s)}/${row.id}`, { placement_params: { depth: 4 } }).expect(200);
      expect(withParams.body.data.placement_params).toEqual({ depth: 4 });

      const logs = (await logsOf(s.id)).filter((l) => l.action === 'prompt_injection.update');
      expect(logs).toHaveLength(3);
      expect(logs[0]).toMatchObject({
        target_id: row.id,
        before_ref: { title_length: 8, placement: 'after_floor' },
        after_ref: { title_length: 9, placement: 'before_history' },
        metadata: {
          changed_fields: [
            'title',
            'placement',
            'placement_params',
            'order',
            'enabled',
            'mode_scope',
            'ttl_ms',
          ],
        },
      });
      expect(JSON.stringify(logs)).not.toContain('New title');
    });

    it('a PATCH that changes nothing writes nothing', async () => {
      const s = await newSession();
      const row = await create(s);
      const res = await patch(`${base(s)}/${row.id}`, {
        title: BODY.title,
        source_kind: 'client_injection',
      }).expect(200);
      expect(res.body.data.updated_at).toBe(row.created_at);
      expect((await logsOf(s.id)).map((l) => l.action)).toEqual(['prompt_injection.create']);
    });

    it('PATCH needs a mutable field and valid values (400 invalid_injection_payload)', async () => {
      const s = await newSession();
      const row = await create(s);
      for (const body of [
        {},
        { source_kind: 'client_injection' },
        { title: null },
        { content: 'x'.repeat(8001) },
        { placement: 'nowhere' },
      ]) {
        const res = await patch(`${base(s)}/${row.id}`, body).expect(400);
        expect(res.body.error.code).toBe('invalid_injection_payload');
      }
      expect((await injectionRows(t, s.id))[0]).toMatchObject({ title: BODY.title, content: BODY.content });
    });

    it('DELETE answers the deleted record and logs it; the id is gone afterwards', async () => {
      const s = await newSession();
      const row = await create(s, { ttl_ms: 60_000 });
      const res = await del(`${base(s)}/${row.id}`).expect(200);
      expect(res.body.data).toEqual(row);
      expect(await injectionRows(t, s.id)).toEqual([]);
      const again = await del(`${base(s)}/${row.id}`).expect(404);
      expect(again.body.error.code).toBe('injection_not_found');
      const logs = await logsOf(s.id);
      expect(logs.map((l) => l.action)).toEqual(['prompt_injection.create', 'prompt_injection.delete']);
      expect(logs[1]).toMatchObject({
        target_id: row.id,
        before_ref: { content_length: BODY.content.length },
      });
    });

    it('404 injection_not_found for a missing id, an expired record and a record of another scope or session', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      const sessionRow = await create(s);
      const branchRow = await create(s, {}, main.id);
      const expired = await create(s, { ttl_ms: 1000 });
      await expireInjection(t, expired.id);
      const otherSession = await newSession();
      const foreign = await create(otherSession);
      const cases: Array<[string, string]> = [
        [base(s), 'pinj_missing'],
        [base(s), expired.id],
        [base(s), branchRow.id],
        [base(s, main.id), sessionRow.id],
        [base(s), foreign.id],
      ];
      for (const [url, id] of cases) {
        expect((await patch(`${url}/${id}`, { enabled: false }).expect(404)).body.error.code).toBe(
          'injection_not_found',
        );
        expect((await del(`${url}/${id}`).expect(404)).body.error.code).toBe('injection_not_found');
      }
      expect((await injectionRows(t, s.id)).every((r) => r.enabled)).toBe(true);
      expect(await injectionRows(t, otherSession.id)).toHaveLength(1);
    });
  });

  describe('branches and access', () => {
    it('branch routes: CRUD on a materialised branch, 404 branch_not_found otherwise', async () => {
      const s = await newSession();
      const branchId = await materialisedBranch(t, s);
      const row = await create(s, { title: 'on branch' }, branchId);
      expect(row).toMatchObject({ scope: 'branch', branch_id: branchId });
      await patch(`${base(s, branchId)}/${row.id}`, { order: 1 }).expect(200);
      expect((await get(base(s, branchId)).expect(200)).body.data).toHaveLength(1);
      await del(`${base(s, branchId)}/${row.id}`).expect(200);

      const otherSession = await newSession();
      const foreign = await materialisedBranch(t, otherSession);
      const empty = await emptyBranch(t, s);
      const sessionRow = await create(s);
      for (const b of ['br_missing', foreign, empty]) {
        const responses = [
          await get(base(s, b)),
          await post(base(s, b), BODY),
          await patch(`${base(s, b)}/${sessionRow.id}`, { order: 2 }),
          await del(`${base(s, b)}/${sessionRow.id}`),
        ];
        for (const res of responses) {
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('branch_not_found');
        }
      }
      expect(await injectionRows(t, s.id)).toHaveLength(1);
      expect(await injectionRows(t, otherSession.id)).toEqual([]);
    });

    it('404 session_not_found for a missing session and for another account on every route', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      const row = await create(s);
      const branchRow = await create(s, {}, main.id);
      for (const [sessionId, key] of [
        ['ses_missing', ADMIN_KEY],
        [s.id, other.apiKey],
      ] as const) {
        const target = { id: sessionId };
        const responses = [
          await get(base(target), key),
          await post(base(target), BODY, key),
          await patch(`${base(target)}/${row.id}`, { order: 1 }, key),
          await del(`${base(target)}/${row.id}`, key),
          await get(base(target, main.id), key),
          await post(base(target, main.id), BODY, key),
          await patch(`${base(target, main.id)}/${branchRow.id}`, { order: 1 }, key),
          await del(`${base(target, main.id)}/${branchRow.id}`, key),
        ];
        for (const res of responses) {
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('session_not_found');
          expect(JSON.stringify(res.body)).not.toContain(BODY.content);
        }
      }
      expect(await injectionRows(t, s.id)).toHaveLength(2);
    });

    it('an observer lists; creating, changing and deleting are 403 project_access_denied', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      await addMember(t, (await findProject(t, s.project_id))!, observer, 'observer');
      const row = await create(s);
      const branchRow = await create(s, {}, main.id);
      expect(
        (await get(base(s), observer.apiKey).expect(200)).body.data.map((i: { id: string }) => i.id),
      ).toEqual([row.id]);
      await get(base(s, main.id), observer.apiKey).expect(200);
      const responses = [
        await post(base(s), BODY, observer.apiKey),
        await patch(`${base(s)}/${row.id}`, { order: 1 }, observer.apiKey),
        await del(`${base(s)}/${row.id}`, observer.apiKey),
        await post(base(s, main.id), BODY, observer.apiKey),
        await patch(`${base(s, main.id)}/${branchRow.id}`, { order: 1 }, observer.apiKey),
        await del(`${base(s, main.id)}/${branchRow.id}`, observer.apiKey),
      ];
      for (const res of responses) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('project_access_denied');
      }
      expect((await injectionRows(t, s.id)).map((r) => r.order)).toEqual([100, 100]);
    });

    it('an archived session or Project lists but refuses writes (409)', async () => {
      const s = await newSession();
      const row = await create(s);
      await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      await get(base(s)).expect(200);
      expect((await post(base(s), BODY).expect(409)).body.error.code).toBe('session_archived');
      expect((await patch(`${base(s)}/${row.id}`, { order: 1 }).expect(409)).body.error.code).toBe(
        'session_archived',
      );
      expect((await del(`${base(s)}/${row.id}`).expect(409)).body.error.code).toBe('session_archived');

      const p = await newSession();
      await archiveProject(t, p.project_id);
      expect((await post(base(p), BODY).expect(409)).body.error.code).toBe('project_archived');
      expect(await injectionRows(t, s.id)).toHaveLength(1);
      expect(await injectionRows(t, p.id)).toEqual([]);
    });
  });

  describe('expired records in a turn (spec 2 not_applied_reason `expired`)', () => {
    const dryRun = (s: { id: string }) =>
      post(`/sessions/${s.id}/respond/dry-run`, { message: 'What now?' }).then((res) => {
        if (res.status !== 200) throw new Error(`dry-run answered ${res.status}: ${res.text}`);
        return res.body.data as {
          messages: Array<{ content: string }>;
          runtime_trace: { injection: { items: Array<Record<string, unknown>>; applied_count: number } };
        };
      });

    it('an expired record not yet removed is traced as not applied with `expired`, and stays out of the prompt', async () => {
      const s = await newSession();
      await create(s, { title: 'Live', content: 'LIVE-TEXT' });
      const gone = await create(s, { title: 'Gone', content: 'GONE-TEXT', ttl_ms: 60_000 });
      await expireInjection(t, gone.id);

      const data = await dryRun(s);
      expect(data.runtime_trace.injection.items).toEqual([
        expect.objectContaining({ title: 'Live', scope: 'session', applied: true, not_applied_reason: null }),
        expect.objectContaining({
          title: 'Gone',
          scope: 'session',
          source_kind: 'client_injection',
          applied: false,
          not_applied_reason: 'expired',
          placement_resolved: null,
        }),
      ]);
      expect(data.runtime_trace.injection.applied_count).toBe(1);
      const prompt = data.messages.map((m) => m.content).join('\n');
      expect(prompt).toContain('LIVE-TEXT');
      expect(prompt).not.toContain('GONE-TEXT');
      // Still invisible to the routes.
      expect((await get(base(s))).body.data.map((i: { id: string }) => i.id)).not.toContain(gone.id);
    });

    it('reads at most the 32 most recently expired records, after the live ones, which keep their quota places', async () => {
      const s = await newSession();
      await fillInjections(t, s, 40);
      const fillers = await injectionRows(t, s.id);
      const now = Date.now();
      // Filler i expired at now - 1000 + i: the 32 most recent are fillers 8..39.
      for (const [i, row] of fillers.entries())
        await db()
          .updateTable('prompt_injections')
          .set({
            title: `Expired ${i}`,
            ttl_ms: 1000,
            created_at: now - 2000 + i,
            expires_at: now - 1000 + i,
          })
          .where('id', '=', row.id)
          .execute();
      await fillInjections(t, s, 128);

      const items = (await dryRun(s)).runtime_trace.injection.items;
      expect(items).toHaveLength(128 + 32);
      expect(items.slice(0, 128).every((i) => String(i.title).startsWith('Filler'))).toBe(true);
      expect(items.some((i) => i.not_applied_reason === 'scope_quota_exceeded')).toBe(false);
      expect(items.slice(128).map((i) => [i.title, i.not_applied_reason])).toEqual(
        Array.from({ length: 32 }, (_, k) => [`Expired ${k + 8}`, 'expired']),
      );
    });
  });

  it('loadForTurn: session and branch records in creation order, then the expired ones; all go with the session', async () => {
    const s = await newSession();
    const main = await materialisedMain(t, s);
    const otherBranch = await materialisedBranch(t, s);
    const first = await create(s, { title: 'first' });
    const onMain = await create(s, { title: 'main', enabled: false }, main.id);
    await create(s, { title: 'elsewhere' }, otherBranch);
    const expired = await create(s, { title: 'expired', ttl_ms: 1000 });
    await expireInjection(t, expired.id);
    const last = await create(s, { title: 'last', ttl_ms: 60_000 });
    await t.http
      .patch(`/sessions/${s.id}/prompt-runtime/policy`)
      .set('x-api-key', ADMIN_KEY)
      .send({ structure: { mode: 'flattened' } })
      .expect(200);

    const loaded = await promptRuntimeRepository.loadForTurn(db(), s.id, main.id);
    // Live records first, in creation order; an expired one not yet removed comes last (traced `expired`).
    expect(loaded.injections.map((i) => i.id)).toEqual([first.id, onMain.id, last.id, expired.id]);
    expect(loaded.injections[1]).toMatchObject({ scope: 'branch', enabled: false });
    expect(loaded.sessionPolicy).toEqual({ structure: { mode: 'flattened' } });
    expect(loaded.branchPolicy).toBeNull();

    await t.http.delete(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(200);
    expect(await injectionRows(t, s.id)).toEqual([]);
  });
});
