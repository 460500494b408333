import { inboxRepository, sessionsRepository, type ProjectRow, type SessionRow } from '@hearth/persistence';
import { createDerivedOutput, projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: { error?: { code: string; details?: unknown } } & Record<string, any> };

/** The Project inbox: create, read, decide, filters and paging, limits, sources, logs and events. */
describe('Project inbox', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let project: ProjectRow;
  let session: SessionRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, deriver, 'deriver');
    session = await createSessionRow(t, project);
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: Pick<ProjectRow, 'id'> = project) => `/projects/${p.id}/inbox`;
  const create = (body: Record<string, unknown>, key = owner.apiKey, p: Pick<ProjectRow, 'id'> = project) =>
    t.http
      .post(base(p))
      .set('x-api-key', key)
      .send({ kind: 'suggestion', title: 'A proposal', ...body });
  const decide = (id: string, decision: 'accept' | 'reject', body?: unknown, key = owner.apiKey) => {
    const req = t.http.post(`${base()}/${id}/${decision}`).set('x-api-key', key);
    return body === undefined ? req : req.send(body as object);
  };
  const list = (query = '', key = owner.apiKey, p: Pick<ProjectRow, 'id'> = project) =>
    t.http.get(`${base(p)}${query}`).set('x-api-key', key);

  const journal = async (p: ProjectRow = project) => ({
    rows: await inboxRepository.listAllOfProject(t.resources.database.db, p.id),
    events: await projectEventRows(t, p.id),
    logs: await projectLogRows(t, p),
  });

  /** A request that must fail with this status and code, leaving no row change, no log and no event. */
  async function refused(
    send: () => PromiseLike<Res>,
    status: number,
    code: string,
    p: ProjectRow = project,
  ) {
    const before = await journal(p);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await journal(p);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
    return res;
  }

  describe('create', () => {
    it('creates a pending entry with every field, one log and one event without the body', async () => {
      const before = await journal();
      const res = await create(
        {
          kind: 'lore.fact',
          title: 'Add a fact',
          body: { secret_plot: 'the butler', n: [1, 2] },
          source_session_id: session.id,
        },
        deriver.apiKey,
      ).expect(201);
      expect(Object.keys(res.body)).toEqual(['item']);
      const item = res.body.item;
      expect(item).toEqual({
        id: expect.stringMatching(/^inbox_[0-9a-z]{26}$/),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: owner.accountId,
        created_by_account_id: deriver.accountId,
        created_by_client_id: deriver.clientId,
        kind: 'lore.fact',
        title: 'Add a fact',
        body: { secret_plot: 'the butler', n: [1, 2] },
        source_session_id: session.id,
        source_floor_id: null,
        source_page_id: null,
        derived_output_id: null,
        status: 'pending',
        decision_reason: null,
        decided_by_account_id: null,
        decided_by_client_id: null,
        decided_at: null,
        created_at: expect.any(Number),
        updated_at: item.created_at,
      });
      const after = await journal();
      expect(after.rows).toHaveLength(before.rows.length + 1);
      const events = after.events.slice(before.events.length);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'inbox_entry.created',
        visibility: 'project',
        session_id: session.id,
        actor_account_id: deriver.accountId,
        actor_client_id: deriver.clientId,
        payload: {
          inbox_entry_id: item.id,
          kind: 'lore.fact',
          status: 'pending',
          decision: null,
          created_by_account_id: deriver.accountId,
          source_session_id: session.id,
          source_floor_id: null,
          source_page_id: null,
          derived_output_id: null,
        },
      });
      expect(JSON.stringify(events[0].payload)).not.toContain('butler');
      const logs = after.logs.slice(before.logs.length);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({
        action: 'inbox_entry.create',
        target_type: 'inbox_entry',
        target_id: item.id,
        project_id: project.id,
        session_id: session.id,
        metadata: expect.objectContaining({ body_byte_count: Buffer.byteLength(JSON.stringify(item.body)) }),
      });
      expect(events[0].operation_log_id).toBe(logs[0].id);
      expect(JSON.stringify(logs[0])).not.toContain('butler');
      expect(
        (await t.http.get(`${base()}/${item.id}`).set('x-api-key', owner.apiKey).expect(200)).body,
      ).toEqual({
        item,
      });
    });

    it('defaults body to {} and keeps null as a value', async () => {
      expect((await create({}).expect(201)).body.item.body).toEqual({});
      expect((await create({ body: null }).expect(201)).body.item.body).toBeNull();
      expect((await create({ body: 'text' }).expect(201)).body.item.body).toBe('text');
    });

    it('kind: 1-128 characters; title: 1-200 characters', async () => {
      expect((await create({ kind: 'k'.repeat(128) }).expect(201)).body.item.kind).toHaveLength(128);
      expect((await create({ title: 't'.repeat(200) }).expect(201)).body.item.title).toHaveLength(200);
      expect((await create({ title: '😀'.repeat(200) }).expect(201)).body.item.title).toHaveLength(400);
      for (const body of [
        { kind: '' },
        { kind: 'k'.repeat(129) },
        { title: '' },
        { title: 't'.repeat(201) },
        { title: '😀'.repeat(201) },
        { kind: 5 },
        { title: null },
        { kind: 'a\u0000b' },
      ]) {
        const res = await refused(() => create(body), 400, 'validation_error');
        expect(JSON.stringify(res.body.error?.details)).toMatch(/kind|title/);
      }
      await refused(
        () => t.http.post(base()).set('x-api-key', owner.apiKey).send({ title: 'no kind' }),
        400,
        'validation_error',
      );
      await refused(
        () => t.http.post(base()).set('x-api-key', owner.apiKey).send({ kind: 'no title' }),
        400,
        'validation_error',
      );
    });

    it('body: at most 64 KiB serialised (413 inbox_entry_payload_too_large one byte past)', async () => {
      const atLimit = 'x'.repeat(64 * 1024 - 2);
      const ok = await create({ body: atLimit }).expect(201);
      expect(ok.body.item.body).toHaveLength(65534);
      const res = await refused(() => create({ body: `${atLimit}x` }), 413, 'inbox_entry_payload_too_large');
      expect(res.body.error?.details).toEqual({ body_byte_count: 65537, max_bytes: 65536 });
    });

    it('body that is not plain JSON for storage: 400 inbox_entry_payload_invalid', async () => {
      await refused(() => create({ body: { text: 'a\u0000b' } }), 400, 'inbox_entry_payload_invalid');
      let deep: unknown = 1;
      for (let i = 0; i < 130; i++) deep = [deep];
      await refused(() => create({ body: deep }), 400, 'inbox_entry_payload_invalid');
    });

    it('unknown fields and bad source types: 400 validation_error', async () => {
      await refused(() => create({ status: 'accepted' }), 400, 'validation_error');
      await refused(() => create({ decision_reason: 'x' }), 400, 'validation_error');
      await refused(() => create({ source_session_id: 5 }), 400, 'validation_error');
      await refused(() => create({ derived_output_id: '' }), 400, 'validation_error');
    });
  });

  describe('sources', () => {
    it('accepts a session and a derived output of the Project', async () => {
      const dout = await createDerivedOutput(t, project.id, owner.apiKey);
      const res = await create({
        source_session_id: session.id,
        derived_output_id: dout.id,
        source_floor_id: null,
      }).expect(201);
      expect(res.body.item).toMatchObject({
        source_session_id: session.id,
        derived_output_id: dout.id,
        source_floor_id: null,
      });
      const [event] = (await projectEventRows(t, project.id)).slice(-1);
      expect(event.payload).toMatchObject({ derived_output_id: dout.id, source_session_id: session.id });
    });

    it('refuses sources outside the Project: 409 same account, 404 other account or missing', async () => {
      const sibling = await createProject(t, { accountId: owner.accountId });
      const siblingSession = await createSessionRow(t, sibling);
      const siblingOutput = await createDerivedOutput(t, sibling.id, owner.apiKey);
      const foreign = await createProject(t, { accountId: outsider.accountId });
      const foreignSession = await createSessionRow(t, foreign);
      const foreignOutput = await createDerivedOutput(t, foreign.id, outsider.apiKey);
      await refused(
        () => create({ source_session_id: siblingSession.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
      await refused(
        () => create({ derived_output_id: siblingOutput.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
      await refused(() => create({ source_session_id: foreignSession.id }), 404, 'session_not_found');
      await refused(() => create({ source_session_id: 'ses_missing' }), 404, 'session_not_found');
      await refused(() => create({ derived_output_id: foreignOutput.id }), 404, 'derived_output_not_found');
      await refused(() => create({ derived_output_id: 'dout_missing' }), 404, 'derived_output_not_found');
      // Floors and pages do not exist yet (issue 5): any id is not found.
      await refused(() => create({ source_floor_id: 'flr_x' }), 404, 'floor_not_found');
      await refused(() => create({ source_page_id: 'pg_x' }), 404, 'page_not_found');
    });
  });

  describe('decide', () => {
    it('accepts once with a reason: one log, one event; nothing reaches the session', async () => {
      const entry = (
        await create({ source_session_id: session.id, body: { merge: 'me' } }, deriver.apiKey).expect(201)
      ).body.item;
      const sessionBefore = await sessionsRepository.findSession(t.resources.database.db, session.id);
      const before = await journal();
      const res = await decide(entry.id, 'accept', { reason: 'Good idea' }).expect(200);
      expect(Object.keys(res.body)).toEqual(['item']);
      expect(res.body.item).toEqual({
        ...entry,
        status: 'accepted',
        decision_reason: 'Good idea',
        decided_by_account_id: owner.accountId,
        decided_by_client_id: owner.clientId,
        decided_at: expect.any(Number),
        updated_at: res.body.item.decided_at,
      });
      const after = await journal();
      const events = after.events.slice(before.events.length);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'inbox_entry.decided',
        visibility: 'project',
        session_id: session.id,
        actor_account_id: owner.accountId,
        payload: {
          inbox_entry_id: entry.id,
          kind: entry.kind,
          status: 'accepted',
          decision: 'accepted',
          source_session_id: session.id,
        },
      });
      expect(JSON.stringify(events[0].payload)).not.toMatch(/Good idea|merge/);
      const logs = after.logs.slice(before.logs.length);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({
        action: 'inbox_entry.decide',
        target_id: entry.id,
        metadata: { decision: 'accepted', reason_char_count: 9 },
      });
      // Accepting merges nothing: the session is untouched.
      expect(await sessionsRepository.findSession(t.resources.database.db, session.id)).toEqual(
        sessionBefore,
      );
      // Decided once: any further decision is 409 and writes nothing.
      await refused(() => decide(entry.id, 'accept'), 409, 'inbox_entry_already_decided');
      await refused(
        () => decide(entry.id, 'reject', { reason: 'changed my mind' }),
        409,
        'inbox_entry_already_decided',
      );
    });

    it('rejects without a body or with reason null; then 409 on both decisions', async () => {
      const a = (await create({}).expect(201)).body.item;
      const rejected = (await decide(a.id, 'reject').expect(200)).body.item;
      expect(rejected).toMatchObject({
        status: 'rejected',
        decision_reason: null,
        decided_by_account_id: owner.accountId,
      });
      const b = (await create({}).expect(201)).body.item;
      expect(
        (await decide(b.id, 'reject', { reason: null }).expect(200)).body.item.decision_reason,
      ).toBeNull();
      await refused(() => decide(a.id, 'reject'), 409, 'inbox_entry_already_decided');
      await refused(() => decide(a.id, 'accept'), 409, 'inbox_entry_already_decided');
      const [event] = (await projectEventRows(t, project.id)).slice(-1);
      expect(event.payload).toMatchObject({ inbox_entry_id: b.id, status: 'rejected', decision: 'rejected' });
    });

    it('reason: 1-2000 characters, a string', async () => {
      const entry = (await create({}).expect(201)).body.item;
      await refused(() => decide(entry.id, 'accept', { reason: '' }), 400, 'validation_error');
      await refused(() => decide(entry.id, 'accept', { reason: 'r'.repeat(2001) }), 400, 'validation_error');
      await refused(() => decide(entry.id, 'accept', { reason: 5 }), 400, 'validation_error');
      await refused(() => decide(entry.id, 'accept', { reason: 'ok', extra: 1 }), 400, 'validation_error');
      const res = await decide(entry.id, 'accept', { reason: 'r'.repeat(2000) }).expect(200);
      expect(res.body.item.decision_reason).toHaveLength(2000);
    });

    it('unknown entry, or an entry of another Project: 404 inbox_entry_not_found', async () => {
      await refused(() => decide('inbox_missing', 'accept'), 404, 'inbox_entry_not_found');
      const sibling = await createProject(t, { accountId: owner.accountId });
      const other = (await create({}, owner.apiKey, sibling).expect(201)).body.item;
      await refused(() => decide(other.id, 'accept'), 404, 'inbox_entry_not_found');
      await refused(
        () => t.http.get(`${base()}/${other.id}`).set('x-api-key', owner.apiKey),
        404,
        'inbox_entry_not_found',
      );
      await refused(
        () => t.http.get(`${base()}/inbox_missing`).set('x-api-key', owner.apiKey),
        404,
        'inbox_entry_not_found',
      );
      expect(
        (await list('', owner.apiKey, sibling).expect(200)).body.items.map((i: { id: string }) => i.id),
      ).toEqual([other.id]);
    });

    it('concurrent decisions on one entry: exactly one succeeds, one event', async () => {
      const entry = (await create({}).expect(201)).body.item;
      const before = (await projectEventRows(t, project.id)).length;
      const results = await Promise.all([
        decide(entry.id, 'accept'),
        decide(entry.id, 'reject'),
        decide(entry.id, 'accept'),
        decide(entry.id, 'reject'),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      const events = (await projectEventRows(t, project.id)).slice(before);
      expect(events.map((e) => e.type)).toEqual(['inbox_entry.decided']);
    });
  });

  describe('list', () => {
    let listed: ProjectRow;
    let entries: Array<{ id: string; kind: string; status: string; created_by_account_id: string }>;
    let listSession: SessionRow;

    beforeAll(async () => {
      listed = await createProject(t, { accountId: owner.accountId });
      await addMember(t, listed, deriver, 'deriver');
      listSession = await createSessionRow(t, listed);
      entries = [];
      for (let i = 0; i < 7; i++) {
        const key = i % 2 === 0 ? owner.apiKey : deriver.apiKey;
        const body = {
          kind: i < 4 ? 'a' : 'b',
          ...(i % 3 === 0 ? { source_session_id: listSession.id } : {}),
        };
        entries.push((await create(body, key, listed).expect(201)).body.item);
      }
      await t.http
        .post(`${base(listed)}/${entries[1].id}/accept`)
        .set('x-api-key', owner.apiKey)
        .expect(200);
      await t.http
        .post(`${base(listed)}/${entries[2].id}/reject`)
        .set('x-api-key', owner.apiKey)
        .expect(200);
    });

    const ids = (res: Res) => (res.body.items as Array<{ id: string }>).map((i) => i.id);
    const newestFirst = (rows: typeof entries) => rows.map((e) => e.id).reverse();

    it('lists every status newest first as {items, next_cursor}', async () => {
      const res = await list('', owner.apiKey, listed).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(ids(res)).toEqual(newestFirst(entries));
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.items[5]).toMatchObject({ status: 'accepted' });
    });

    it('filters by status, kind, source_session_id and created_by_account_id', async () => {
      expect(ids(await list('?status=accepted', owner.apiKey, listed).expect(200))).toEqual([entries[1].id]);
      expect(ids(await list('?status=rejected', owner.apiKey, listed).expect(200))).toEqual([entries[2].id]);
      expect(ids(await list('?status=pending', owner.apiKey, listed).expect(200))).toEqual(
        newestFirst(entries.filter((_, i) => i !== 1 && i !== 2)),
      );
      expect(ids(await list('?kind=b', owner.apiKey, listed).expect(200))).toEqual(
        newestFirst(entries.slice(4)),
      );
      expect(
        ids(await list(`?source_session_id=${listSession.id}`, owner.apiKey, listed).expect(200)),
      ).toEqual(newestFirst(entries.filter((_, i) => i % 3 === 0)));
      expect(
        ids(await list(`?created_by_account_id=${deriver.accountId}`, owner.apiKey, listed).expect(200)),
      ).toEqual(newestFirst(entries.filter((_, i) => i % 2 === 1)));
      expect(ids(await list('?kind=a&status=pending', owner.apiKey, listed).expect(200))).toEqual([
        entries[3].id,
        entries[0].id,
      ]);
      await refused(() => list('?status=decided', owner.apiKey, listed), 400, 'validation_error', listed);
      await refused(() => list('?unknown=1', owner.apiKey, listed), 400, 'validation_error', listed);
      await refused(() => list('?kind=a%00b', owner.apiKey, listed), 400, 'validation_error', listed);
    });

    it('pages with a cursor bound to the Project and filters; limit 1-200', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Res = await list(
          `?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
          owner.apiKey,
          listed,
        ).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(3);
        seen.push(...ids(res));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(newestFirst(entries));
      const first = await list('?limit=2', owner.apiKey, listed).expect(200);
      await refused(
        () => list(`?limit=2&kind=a&cursor=${first.body.next_cursor}`, owner.apiKey, listed),
        400,
        'invalid_cursor',
        listed,
      );
      await refused(
        () => list(`?limit=2&cursor=${first.body.next_cursor}`, owner.apiKey, project),
        400,
        'invalid_cursor',
      );
      await refused(() => list('?cursor=garbage!', owner.apiKey, listed), 400, 'invalid_cursor', listed);
      expect(ids(await list('?limit=200', owner.apiKey, listed).expect(200))).toHaveLength(7);
      expect(ids(await list('?limit=1', owner.apiKey, listed).expect(200))).toHaveLength(1);
      await refused(() => list('?limit=201', owner.apiKey, listed), 400, 'validation_error', listed);
      await refused(() => list('?limit=0', owner.apiKey, listed), 400, 'validation_error', listed);
    });

    it('defaults to 50 entries a page', async () => {
      const big = await createProject(t, { accountId: owner.accountId });
      for (let i = 0; i < 51; i++) await create({ kind: `k${i}` }, owner.apiKey, big).expect(201);
      const page = await list('', owner.apiKey, big).expect(200);
      expect(page.body.items).toHaveLength(50);
      const rest = await list(`?cursor=${page.body.next_cursor}`, owner.apiKey, big).expect(200);
      expect(rest.body.items.map((i: { kind: string }) => i.kind)).toEqual(['k0']);
      expect(rest.body.next_cursor).toBeNull();
    });
  });
});
