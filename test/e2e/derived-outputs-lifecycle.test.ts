import type { ProjectRow } from '@hearth/persistence';
import {
  createDerivedOutput,
  derivedOutputRows,
  projectEventRows,
  projectJournal,
  projectLogRows,
} from '../support/factories/derived-outputs';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** Spec 1 "Derived outputs": the state table, PATCH and DELETE, the list (filters, paging), archived Projects. */
describe('Derived outputs: state table, list and archived Projects', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, deriver, 'deriver');
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: ProjectRow = project) => `/projects/${p.id}/derived-outputs`;
  const patch = (id: string, body: unknown, key = owner.apiKey) =>
    t.http
      .patch(`${base()}/${id}`)
      .set('x-api-key', key)
      .send(body as object);
  const del = (id: string, key = owner.apiKey) => t.http.delete(`${base()}/${id}`).set('x-api-key', key);
  const get = (id: string, key = owner.apiKey) => t.http.get(`${base()}/${id}`).set('x-api-key', key);

  /** A request that must fail with this status and code, leaving no row, no log and no event. */
  async function expectNothingWritten(
    send: () => PromiseLike<{ status: number; body: { error?: { code: string } } }>,
    status: number,
    code: string,
  ) {
    const before = await projectJournal(t, project);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await projectJournal(t, project);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
  }

  describe('state table', () => {
    it('moves draft -> published -> archived, one event of the right type per write', async () => {
      const item = await createDerivedOutput(t, project.id, owner.apiKey, { value: { v: 1 } });
      const before = (await projectEventRows(t, project.id)).length;
      const published = await patch(item.id, { status: 'published' }).expect(200);
      expect(Object.keys(published.body)).toEqual(['item']);
      expect(published.body.item).toMatchObject({ status: 'published', value: { v: 1 } });
      const edited = await patch(item.id, { value: { v: 2 } }).expect(200);
      expect(edited.body.item).toMatchObject({ status: 'published', value: { v: 2 } });
      const archived = await patch(item.id, { status: 'archived' }).expect(200);
      expect(archived.body.item.status).toBe('archived');
      const events = (await projectEventRows(t, project.id)).slice(before);
      expect(events.map((e) => [e.type, (e.payload as { changed_fields: string[] }).changed_fields])).toEqual(
        [
          ['derived_output.updated', ['status']],
          ['derived_output.updated', ['value']],
          ['derived_output.archived', ['status']],
        ],
      );
      const actions = (await projectLogRows(t, project))
        .filter((l) => l.target_id === item.id)
        .map((l) => l.action);
      expect(actions).toEqual([
        'derived_output.create',
        'derived_output.update',
        'derived_output.update',
        'derived_output.archive',
      ]);
    });

    it('archives a draft through DELETE and keeps the row; DELETE again changes nothing', async () => {
      const item = await createDerivedOutput(t, project.id, owner.apiKey);
      const res = await del(item.id).expect(200);
      expect(res.body.item).toMatchObject({ id: item.id, status: 'archived' });
      expect((await get(item.id).expect(200)).body.item.status).toBe('archived');
      expect((await derivedOutputRows(t, project.id)).find((r) => r.id === item.id)?.status).toBe('archived');
      const event = (await projectEventRows(t, project.id)).at(-1);
      expect(event).toMatchObject({ type: 'derived_output.archived' });
      const before = await projectJournal(t, project);
      expect((await del(item.id).expect(200)).body.item.status).toBe('archived');
      const after = await projectJournal(t, project);
      expect([after.events.length, after.logs.length]).toEqual([before.events.length, before.logs.length]);
    });

    it('keeps archived entries immutable (409) and refuses moves outside the table (400)', async () => {
      const item = await createDerivedOutput(t, project.id, owner.apiKey, { status: 'published' });
      await expectNothingWritten(
        () => patch(item.id, { status: 'draft' }),
        400,
        'derived_output_invalid_status',
      );
      await expectNothingWritten(
        () => patch(item.id, { status: 'gone' }),
        400,
        'derived_output_invalid_status',
      );
      await del(item.id).expect(200);
      await expectNothingWritten(
        () => patch(item.id, { value: { changed: true } }),
        409,
        'derived_output_archived_immutable',
      );
      await expectNothingWritten(
        () => patch(item.id, { status: 'published' }),
        409,
        'derived_output_archived_immutable',
      );
      await expectNothingWritten(
        () => patch(item.id, { status: 'archived' }),
        409,
        'derived_output_archived_immutable',
      );
    });

    it('needs at least one field, refuses unknown fields and checks the value on update', async () => {
      const item = await createDerivedOutput(t, project.id, owner.apiKey);
      await expectNothingWritten(() => patch(item.id, {}), 400, 'validation_error');
      await expectNothingWritten(() => patch(item.id, { domain: 'other' }), 400, 'validation_error');
      await expectNothingWritten(
        () => patch(item.id, { value: 'y'.repeat(262143) }),
        413,
        'derived_output_payload_too_large',
      );
      await expectNothingWritten(
        () => patch(item.id, { value: 'a\u0000' }),
        400,
        'derived_output_payload_invalid',
      );
      await expectNothingWritten(
        () => patch('dout_00000000000000000000000000', { value: 1 }),
        404,
        'derived_output_not_found',
      );
      await expectNothingWritten(
        () => del('dout_00000000000000000000000000'),
        404,
        'derived_output_not_found',
      );
      expect((await get('dout_00000000000000000000000000').expect(404)).body.error.code).toBe(
        'derived_output_not_found',
      );
    });

    it('writes nothing for a PATCH that changes nothing', async () => {
      const item = await createDerivedOutput(t, project.id, owner.apiKey, { value: { b: 1, a: 2 } });
      const before = await projectJournal(t, project);
      const res = await patch(item.id, { value: { a: 2, b: 1 }, status: 'draft' }).expect(200);
      expect(res.body.item).toMatchObject({ id: item.id, status: 'draft', value: { a: 2, b: 1 } });
      const after = await projectJournal(t, project);
      expect([after.events.length, after.logs.length]).toEqual([before.events.length, before.logs.length]);
    });
  });

  describe('list', () => {
    let listed: ProjectRow;
    const ids: Record<string, string[]> = { a: [], b: [] };

    beforeAll(async () => {
      listed = await createProject(t, { accountId: owner.accountId });
      await addMember(t, listed, deriver, 'deriver');
      for (let i = 0; i < 5; i++) {
        ids.a.push(
          (
            await createDerivedOutput(t, listed.id, owner.apiKey, {
              domain: 'a',
              status: i % 2 ? 'published' : 'draft',
            })
          ).id,
        );
        ids.b.push((await createDerivedOutput(t, listed.id, deriver.apiKey, { domain: 'b' })).id);
      }
    });
    const list = (query: string, key = owner.apiKey) =>
      t.http.get(`${base(listed)}${query}`).set('x-api-key', key);

    it('lists newest first with next_cursor null at the end, no data wrapper', async () => {
      const res = await list('').expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(res.body.items.map((i: { id: string }) => i.id)).toEqual([...ids.a, ...ids.b].sort().reverse());
      expect(res.body.next_cursor).toBeNull();
    });

    it('filters by domain, status and owner_account_id', async () => {
      expect((await list('?domain=a').expect(200)).body.items.map((i: { id: string }) => i.id)).toEqual(
        [...ids.a].reverse(),
      );
      const published = (await list('?status=published').expect(200)).body.items;
      expect(published.map((i: { id: string }) => i.id)).toEqual([ids.a[3], ids.a[1]]);
      const byDeriver = (await list(`?owner_account_id=${deriver.accountId}`).expect(200)).body.items;
      expect(byDeriver.map((i: { id: string }) => i.id)).toEqual([...ids.b].reverse());
      expect((await list('?status=archived').expect(200)).body.items).toEqual([]);
    });

    it('pages with limit and cursor without gap or repeat', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await list(query).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.items.map((i: { id: string }) => i.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([...ids.a, ...ids.b].sort().reverse());
    });

    it('takes limit 1 to 200 and refuses 0, 201 and bad cursors', async () => {
      expect((await list('?limit=1').expect(200)).body.items).toHaveLength(1);
      await list('?limit=200').expect(200);
      expect((await list('?limit=0').expect(400)).body.error.code).toBe('validation_error');
      expect((await list('?limit=201').expect(400)).body.error.code).toBe('validation_error');
      expect((await list('?status=deleted').expect(400)).body.error.code).toBe('validation_error');
      expect((await list('?unknown=1').expect(400)).body.error.code).toBe('validation_error');
      expect((await list('?cursor=not-a-cursor!').expect(400)).body.error.code).toBe('invalid_cursor');
      const first = await list('?limit=2&domain=a').expect(200);
      // A cursor of one filter set is refused by another.
      expect(
        (await list(`?limit=2&domain=b&cursor=${first.body.next_cursor}`).expect(400)).body.error.code,
      ).toBe('invalid_cursor');
    });
  });

  describe('default page size', () => {
    it('pages 50 by default: 51 outputs give a full page of 50, then the last one', async () => {
      const crowded = await createProject(t, { accountId: owner.accountId });
      for (let i = 0; i < 51; i++) await createDerivedOutput(t, crowded.id, owner.apiKey, { domain: 'bulk' });
      const list = (query: string) => t.http.get(`${base(crowded)}${query}`).set('x-api-key', owner.apiKey);
      const idsOf = (body: { items: Array<{ id: string }> }) => body.items.map((i) => i.id);
      const all = idsOf((await list('?limit=200').expect(200)).body);
      expect(all).toHaveLength(51);
      const first = await list('').expect(200);
      expect(first.body.items).toHaveLength(50);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await list(`?cursor=${encodeURIComponent(first.body.next_cursor)}`).expect(200);
      expect(second.body).toEqual({ items: [expect.objectContaining({ id: all[50] })], next_cursor: null });
      expect([...idsOf(first.body), ...idsOf(second.body)]).toEqual(all);
    });
  });

  describe('archived Project', () => {
    it('answers 409 project_archived on every derived output route and writes nothing', async () => {
      const archived = await createProject(t, { accountId: owner.accountId, status: 'archived' });
      const routes = [
        t.http.get(`${base(archived)}`),
        t.http.post(`${base(archived)}`).send({ domain: 'x' }),
        t.http.get(`${base(archived)}/dout_00000000000000000000000000`),
        t.http.patch(`${base(archived)}/dout_00000000000000000000000000`).send({ status: 'published' }),
        t.http.delete(`${base(archived)}/dout_00000000000000000000000000`),
      ];
      for (const route of routes) {
        const res = await route.set('x-api-key', owner.apiKey);
        expect({ status: res.status, code: res.body.error?.code }).toEqual({
          status: 409,
          code: 'project_archived',
        });
      }
      expect(await projectJournal(t, archived)).toEqual({ rows: [], events: [], logs: [] });
    });
  });
});
