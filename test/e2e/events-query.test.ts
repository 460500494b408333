import type { ProjectRow } from '@hearth/persistence';
import { appendEvent, appendEventBatch, appendEvents, createSessionRow } from '../support/factories/events';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/** The Project Event fields of spec 1, exactly. */
const EVENT_FIELDS = [
  'id',
  'workspace_id',
  'project_id',
  'sequence',
  'type',
  'visibility',
  'source',
  'actor_account_id',
  'actor_client_id',
  'session_id',
  'branch_id',
  'floor_id',
  'page_id',
  'message_id',
  'operation_log_id',
  'correlation_id',
  'causation_event_id',
  'payload',
  'created_at',
].sort();

describe('GET /projects/:id/events', () => {
  let t: TestApp;
  let observer: Caller;
  let deriver: Caller;
  let stranger: Caller;

  const get = (projectId: string, query: Record<string, string | number> = {}, key = ADMIN_KEY) =>
    t.http.get(`/projects/${projectId}/events`).query(query).set('x-api-key', key);

  beforeAll(async () => {
    t = await startTestApp();
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('pages with `after` without gap or repeat while 20 writers append concurrently', async () => {
    const project = await createProject(t);
    const writers = 20;
    const perWriter = 12;
    const total = writers * perWriter;
    let writing = true;
    const seen: number[] = [];
    let pollsDuringWrites = 0;
    const poller = (async () => {
      let after = 0;
      // Poll during the writes and once more after the last one committed.
      for (let finalRound = false; ;) {
        if (writing) pollsDuringWrites++;
        const res = await get(project.id, { after, limit: 7 }).expect(200);
        const page = res.body as {
          items: Array<{ sequence: number }>;
          next_after: number;
          has_more: boolean;
        };
        seen.push(...page.items.map((e) => e.sequence));
        expect(page.next_after).toBe(page.items.length ? page.items[page.items.length - 1].sequence : after);
        after = page.next_after;
        if (page.has_more) continue;
        if (finalRound) break;
        if (!writing) finalRound = true;
        else await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) await appendEvent(t, project, { payload: { writer: w, i } });
      }),
    );
    writing = false;
    await poller;
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(pollsDuringWrites).toBeGreaterThan(1);
  });

  it('returns exactly the spec fields, payload parsed, in sequence order', async () => {
    const project = await createProject(t);
    const session = await createSessionRow(t, project);
    await appendEvent(t, project, {
      type: 'session.archived',
      session_id: session.id,
      correlation_id: 'corr-1',
      payload: { session_id: session.id, changed_fields: ['status'] },
    });
    const res = await get(project.id).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['has_more', 'items', 'next_after']);
    expect(res.body).toMatchObject({ next_after: 1, has_more: false });
    const [item] = res.body.items;
    expect(Object.keys(item).sort()).toEqual(EVENT_FIELDS);
    expect(item).toMatchObject({
      project_id: project.id,
      workspace_id: project.workspace_id,
      sequence: 1,
      type: 'session.archived',
      visibility: 'project',
      source: 'api',
      session_id: session.id,
      correlation_id: 'corr-1',
      payload: { session_id: session.id, changed_fields: ['status'] },
    });
    expect(item.id).toMatch(/^evt_/);
    expect(typeof item.created_at).toBe('number');
  });

  describe('limits and paging', () => {
    let project: ProjectRow;
    beforeAll(async () => {
      project = await createProject(t);
      await appendEventBatch(
        t,
        project,
        Array.from({ length: 260 }, () => ({})),
      );
      await appendEventBatch(
        t,
        project,
        Array.from({ length: 260 }, () => ({})),
      );
    });

    it('defaults to 100 items', async () => {
      const res = await get(project.id).expect(200);
      expect(res.body.items).toHaveLength(100);
      expect(res.body).toMatchObject({ next_after: 100, has_more: true });
    });

    it('accepts limit 500 and returns 500 with has_more', async () => {
      const res = await get(project.id, { limit: 500 }).expect(200);
      expect(res.body.items).toHaveLength(500);
      expect(res.body.items[499].sequence).toBe(500);
      expect(res.body).toMatchObject({ next_after: 500, has_more: true });
      const rest = await get(project.id, { limit: 500, after: 500 }).expect(200);
      expect(rest.body.items.map((e: { sequence: number }) => e.sequence)).toEqual(
        Array.from({ length: 20 }, (_, i) => 501 + i),
      );
      expect(rest.body).toMatchObject({ next_after: 520, has_more: false });
    });

    it('answers an empty page with next_after equal to after', async () => {
      const res = await get(project.id, { after: 520 }).expect(200);
      expect(res.body).toEqual({ items: [], next_after: 520, has_more: false });
      const beyond = await get(project.id, { after: 9999 }).expect(200);
      expect(beyond.body).toEqual({ items: [], next_after: 9999, has_more: false });
    });

    it.each([
      ['limit 501', { limit: 501 }, 'limit'],
      ['limit 0', { limit: 0 }, 'limit'],
      ['limit not a number', { limit: 'ten' }, 'limit'],
      ['limit not an integer', { limit: 1.5 }, 'limit'],
      ['negative after', { after: -1 }, 'after'],
      ['after not a number', { after: 'x' }, 'after'],
      ['an unknown query field', { cursor: 'abc' }, 'cursor'],
    ])('rejects %s with 400 validation_error', async (_, query, field) => {
      const res = await get(project.id, query as Record<string, string | number>).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });
  });

  describe('filters', () => {
    let project: ProjectRow;
    let sessionA: string;
    let sessionB: string;
    beforeAll(async () => {
      project = await createProject(t);
      sessionA = (await createSessionRow(t, project)).id;
      sessionB = (await createSessionRow(t, project)).id;
      await appendEvents(t, project, 9, (i) => ({
        type: ['floor.committed', 'session.archived', 'derived_output.created'][i % 3],
        session_id: i % 2 === 0 ? sessionA : sessionB,
      }));
    });

    it('filters by comma-separated types', async () => {
      const res = await get(project.id, { types: 'session.archived, derived_output.created,' }).expect(200);
      expect(res.body.items.map((e: { sequence: number }) => e.sequence)).toEqual([2, 3, 5, 6, 8, 9]);
      const one = await get(project.id, { types: 'floor.committed' }).expect(200);
      expect(one.body.items.map((e: { type: string }) => e.type)).toEqual(Array(3).fill('floor.committed'));
      const none = await get(project.id, { types: 'no.such.type' }).expect(200);
      expect(none.body).toEqual({ items: [], next_after: 0, has_more: false });
    });

    it('filters by session_id, alone and with types', async () => {
      const res = await get(project.id, { session_id: sessionA }).expect(200);
      expect(res.body.items.map((e: { sequence: number }) => e.sequence)).toEqual([1, 3, 5, 7, 9]);
      const both = await get(project.id, { session_id: sessionB, types: 'session.archived' }).expect(200);
      expect(both.body.items.map((e: { sequence: number }) => e.sequence)).toEqual([2, 8]);
    });

    it('answers 404 session_not_found for a session of another Project or none at all', async () => {
      const other = await createProject(t);
      const foreign = await createSessionRow(t, other);
      for (const sessionId of [foreign.id, 'ses_missing']) {
        const res = await get(project.id, { session_id: sessionId }).expect(404);
        expect(res.body.error.code).toBe('session_not_found');
      }
    });
  });

  describe('visibility and access', () => {
    let project: ProjectRow;
    beforeAll(async () => {
      project = await createProject(t);
      await addMember(t, project, observer, 'observer');
      await addMember(t, project, deriver, 'deriver');
      await appendEvents(t, project, 6, (i) => ({
        visibility: (['project', 'owner', 'internal'] as const)[i % 3],
        type: `kind.${i}`,
      }));
    });

    it('shows the owner project and owner events, never internal ones', async () => {
      const res = await get(project.id).expect(200);
      expect(
        res.body.items.map((e: { sequence: number; visibility: string }) => [e.sequence, e.visibility]),
      ).toEqual([
        [1, 'project'],
        [2, 'owner'],
        [4, 'project'],
        [5, 'owner'],
      ]);
      expect(res.body).toMatchObject({ next_after: 5, has_more: false });
    });

    it.each(['observer', 'deriver'])('shows an %s only project events', async (role) => {
      const caller = role === 'observer' ? observer : deriver;
      const res = await get(project.id, {}, caller.apiKey).expect(200);
      expect(
        res.body.items.map((e: { sequence: number; visibility: string }) => [e.sequence, e.visibility]),
      ).toEqual([
        [1, 'project'],
        [4, 'project'],
      ]);
      // Asking for the hidden kinds explicitly changes nothing.
      const asked = await get(project.id, { types: 'kind.1,kind.2' }, caller.apiKey).expect(200);
      expect(asked.body.items).toEqual([]);
    });

    it('answers 404 project_not_found to a non-member, another account, and an unknown id', async () => {
      for (const [id, key] of [
        [project.id, stranger.apiKey],
        ['prj_missing', ADMIN_KEY],
      ]) {
        const res = await get(id, {}, key).expect(404);
        expect(res.body.error.code).toBe('project_not_found');
      }
      const own = await createProject(t, { accountId: stranger.accountId });
      const res = await get(own.id).expect(404);
      expect(res.body.error.code).toBe('project_not_found');
    });

    it('documents both routes in the OpenAPI document', async () => {
      const doc = await t.http.get('/openapi.json').expect(200);
      expect(doc.body.paths['/projects/{id}/events']?.get).toBeDefined();
      expect(doc.body.paths['/projects/{id}/events/stream']?.get).toBeDefined();
    });

    it('answers 401 without a key', async () => {
      const res = await t.http.get(`/projects/${project.id}/events`).expect(401);
      expect(res.body.error.code).toBe('unauthorized');
    });
  });
});
