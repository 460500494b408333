import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { archiveProject, createManualProject, createProject } from '../support/factories/projects';
import { createSession, createSessionInProject } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

/** Spec 1 "Projects": GET /projects, GET /projects/:id, GET /projects/:id/sessions (bare envelopes). */
describe('projects', () => {
  let t: TestApp;
  /** An account of its own per suite, so listings hold only what the tests made. */
  let owner: Caller;
  let stranger: Caller;

  const get = (path: string, caller: Caller = owner) => t.http.get(path).set('x-api-key', caller.apiKey);
  const ids = (body: { items: Array<{ id: string }> }) => body.items.map((i) => i.id);

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /projects', () => {
    let ownerOf: Caller;
    let owned: string[];
    let observed: string;
    let derived: string;
    let archived: string;

    beforeAll(async () => {
      ownerOf = await createAccountCaller(t, { name: 'Lister' });
      const a = await createManualProject(t, { accountId: ownerOf.accountId, name: 'A' });
      const b = await createSession(t, { apiKey: ownerOf.apiKey, body: { title: 'B' } });
      const c = await createManualProject(t, { accountId: ownerOf.accountId, name: 'C' });
      owned = [c.id, b.projectId, a.id];
      const theirs1 = await createManualProject(t, { accountId: stranger.accountId, name: 'Observed' });
      const theirs2 = await createManualProject(t, { accountId: stranger.accountId, name: 'Derived' });
      await createManualProject(t, { accountId: stranger.accountId, name: 'Hidden' });
      await addMember(t, theirs1, ownerOf, 'observer');
      await addMember(t, theirs2, ownerOf, 'deriver');
      observed = theirs1.id;
      derived = theirs2.id;
      archived = (
        await createManualProject(t, { accountId: ownerOf.accountId, status: 'archived', name: 'Old' })
      ).id;
    });

    it('lists owned and member Projects, newest first, active by default, with the caller’s role', async () => {
      const res = await get('/projects', ownerOf).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(res.body.next_cursor).toBeNull();
      expect(ids(res.body)).toEqual([derived, observed, ...owned]);
      const roles = Object.fromEntries(
        res.body.items.map((p: { id: string; role: string }) => [p.id, p.role]),
      );
      expect(roles).toEqual({
        [derived]: 'deriver',
        [observed]: 'observer',
        [owned[0]]: 'owner',
        [owned[1]]: 'owner',
        [owned[2]]: 'owner',
      });
      expect(res.body.items.find((p: { id: string }) => p.id === owned[1])).toMatchObject({
        kind: 'session_default',
        name: 'B',
      });
    });

    it('filters by role and status', async () => {
      expect(ids((await get('/projects?role=owner', ownerOf).expect(200)).body)).toEqual(owned);
      expect(ids((await get('/projects?role=observer', ownerOf).expect(200)).body)).toEqual([observed]);
      expect(ids((await get('/projects?role=deriver', ownerOf).expect(200)).body)).toEqual([derived]);
      expect(ids((await get('/projects?status=archived', ownerOf).expect(200)).body)).toEqual([archived]);
      expect(ids((await get('/projects?status=archived&role=observer', ownerOf).expect(200)).body)).toEqual(
        [],
      );
    });

    it('a subject that is observer as account and deriver as Client is listed under deriver only', async () => {
      const dual = await createAccountCaller(t, { name: 'Dual' });
      const both = await createManualProject(t, { accountId: stranger.accountId, name: 'Both' });
      await addMember(t, both, dual, 'observer', { as: 'account' });
      await addMember(t, both, dual, 'deriver', { as: 'client' });
      expect((await get('/projects?role=observer', dual).expect(200)).body.items).toEqual([]);
      expect((await get('/projects?role=deriver', dual).expect(200)).body.items).toEqual([
        expect.objectContaining({ id: both.id, role: 'deriver' }),
      ]);
    });

    it('pages with the opaque cursor: every Project once, in order', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const res = await get(`/projects${query}`, ownerOf).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...ids(res.body));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual([derived, observed, ...owned]);
      expect(pages).toBe(3);
    });

    it('answers 400 invalid_cursor for a malformed cursor or one of another list or filter', async () => {
      const first = await get('/projects?limit=1', ownerOf).expect(200);
      const cursor = first.body.next_cursor as string;
      const otherFilter = await get(`/projects?status=archived&cursor=${cursor}`, ownerOf).expect(400);
      expect(otherFilter.body.error.code).toBe('invalid_cursor');
      const otherRole = await get(`/projects?role=owner&cursor=${cursor}`, ownerOf).expect(400);
      expect(otherRole.body.error.code).toBe('invalid_cursor');
      for (const bad of ['garbage!', 'eyJ2IjoxfQ', '', 'x'.repeat(600)]) {
        const res = await get(`/projects?cursor=${encodeURIComponent(bad)}`, ownerOf).expect(400);
        expect(res.body.error.code).toBe('invalid_cursor');
      }
      const project = await createManualProject(t, { accountId: ownerOf.accountId });
      for (let i = 0; i < 2; i++) await createSessionInProject(t, project.id, { apiKey: ownerOf.apiKey });
      const sessions = await get(`/projects/${project.id}/sessions?limit=1`, ownerOf).expect(200);
      const foreign = await get(`/projects?cursor=${sessions.body.next_cursor}`, ownerOf).expect(400);
      expect(foreign.body.error.code).toBe('invalid_cursor');
    });

    it('accepts limit 200, rejects 201, 0, unknown roles, statuses and fields with 400 validation_error', async () => {
      await get('/projects?limit=200', ownerOf).expect(200);
      for (const q of [
        'limit=201',
        'limit=0',
        'limit=x',
        'role=admin',
        'status=deleted',
        'workspace_id=ws_1',
      ]) {
        const res = await get(`/projects?${q}`, ownerOf).expect(400);
        expect(res.body.error.code).toBe('validation_error');
      }
    });

    it('pages 50 by default: 51 Projects give a full page of 50, then the last one', async () => {
      const many = await createAccountCaller(t, { name: 'Many Projects' });
      for (let i = 0; i < 51; i++) await createManualProject(t, { accountId: many.accountId, name: `P${i}` });
      const all = ids((await get('/projects?limit=200', many).expect(200)).body);
      expect(all).toHaveLength(51);
      const first = await get('/projects', many).expect(200);
      expect(first.body.items).toHaveLength(50);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await get(`/projects?cursor=${encodeURIComponent(first.body.next_cursor)}`, many).expect(
        200,
      );
      expect(second.body).toEqual({ items: [expect.objectContaining({ id: all[50] })], next_cursor: null });
      expect([...ids(first.body), ...ids(second.body)]).toEqual(all);
    });

    it('shows a stranger none of it', async () => {
      const res = await get('/projects?limit=200', stranger).expect(200);
      for (const id of owned) expect(ids(res.body)).not.toContain(id);
    });

    it('shows a non-default Client only the Projects it is a member of', async () => {
      const client = await createClientCaller(t, ownerOf.accountId);
      expect((await get('/projects', client).expect(200)).body).toEqual({ items: [], next_cursor: null });
      expect((await get('/projects?role=owner', client).expect(200)).body.items).toEqual([]);
      const project = await createManualProject(t, { accountId: ownerOf.accountId, name: 'Client view' });
      await addMember(t, project, client, 'observer');
      const res = await get('/projects', client).expect(200);
      expect(res.body.items).toEqual([expect.objectContaining({ id: project.id, role: 'observer' })]);
      expect((await get('/projects?role=owner', client).expect(200)).body.items).toEqual([]);
    });
  });

  describe('GET /projects/:id', () => {
    it('answers the Project object itself, with role and parsed settings_override', async () => {
      const project = await createProject(t, {
        accountId: owner.accountId,
        name: 'Detail',
        description: 'About',
        settingsOverride: { temperature: 0.7, nested: { a: [1, 2] } },
      });
      const res = await get(`/projects/${project.id}`).expect(200);
      expect(res.body).toEqual({
        id: project.id,
        workspace_id: project.workspace_id,
        account_id: owner.accountId,
        name: 'Detail',
        description: 'About',
        kind: 'manual',
        status: 'active',
        role: 'owner',
        settings_override: { temperature: 0.7, nested: { a: [1, 2] } },
        created_at: project.created_at,
        updated_at: project.updated_at,
      });
      const plain = await createManualProject(t, { accountId: owner.accountId });
      expect((await get(`/projects/${plain.id}`).expect(200)).body.settings_override).toEqual({});
    });

    it('answers 404 project_not_found for a missing Project and for another account’s', async () => {
      expect((await get('/projects/prj_missing').expect(404)).body.error.code).toBe('project_not_found');
      const theirs = await createManualProject(t, { accountId: stranger.accountId });
      expect((await get(`/projects/${theirs.id}`).expect(404)).body.error.code).toBe('project_not_found');
    });

    it('answers 409 project_archived for an archived Project (members only; others still 404)', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      await archiveProject(t, project.id);
      expect((await get(`/projects/${project.id}`).expect(409)).body.error.code).toBe('project_archived');
      expect((await get(`/projects/${project.id}`, stranger).expect(404)).body.error.code).toBe(
        'project_not_found',
      );
    });
  });

  describe('GET /projects/:id/sessions', () => {
    it('lists session summaries (with workspace_id and project_id), newest first', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      const a = await createSessionInProject(t, project.id, { apiKey: owner.apiKey, body: { title: 'a' } });
      const b = await createSessionInProject(t, project.id, { apiKey: owner.apiKey, body: { title: 'b' } });
      await createSession(t, { apiKey: owner.apiKey }); // elsewhere
      const res = await get(`/projects/${project.id}/sessions`).expect(200);
      expect(res.body).toEqual({
        items: [b, a].map((s) => ({
          id: s.id,
          workspace_id: project.workspace_id,
          project_id: project.id,
          title: s.body.title,
          status: 'active',
          created_at: s.body.created_at,
          updated_at: s.body.updated_at,
        })),
        next_cursor: null,
      });
    });

    it('filters by status and pages with the cursor', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      const made = [];
      for (let i = 0; i < 5; i++)
        made.push(await createSessionInProject(t, project.id, { apiKey: owner.apiKey }));
      await t.http
        .patch(`/sessions/${made[1].id}`)
        .set('x-api-key', owner.apiKey)
        .send({ status: 'archived' })
        .expect(200);
      expect(ids((await get(`/projects/${project.id}/sessions?status=archived`).expect(200)).body)).toEqual([
        made[1].id,
      ]);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&cursor=${cursor}` : '';
        const res = await get(`/projects/${project.id}/sessions?status=active&limit=2${q}`).expect(200);
        seen.push(...ids(res.body));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([made[4], made[3], made[2], made[0]].map((s) => s.id));

      const first = await get(`/projects/${project.id}/sessions?limit=1`).expect(200);
      const otherProject = await createManualProject(t, { accountId: owner.accountId });
      const foreign = await get(
        `/projects/${otherProject.id}/sessions?cursor=${first.body.next_cursor}`,
      ).expect(400);
      expect(foreign.body.error.code).toBe('invalid_cursor');
      const otherStatus = await get(
        `/projects/${project.id}/sessions?status=active&cursor=${first.body.next_cursor}`,
      ).expect(400);
      expect(otherStatus.body.error.code).toBe('invalid_cursor');
      expect((await get(`/projects/${project.id}/sessions?cursor=%25%25`).expect(400)).body.error.code).toBe(
        'invalid_cursor',
      );
    });

    it('pages 50 by default: 51 sessions give a full page of 50, then the last one', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      for (let i = 0; i < 51; i++) await createSessionInProject(t, project.id, { apiKey: owner.apiKey });
      const all = ids((await get(`/projects/${project.id}/sessions?limit=200`).expect(200)).body);
      expect(all).toHaveLength(51);
      const first = await get(`/projects/${project.id}/sessions`).expect(200);
      expect(first.body.items).toHaveLength(50);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await get(
        `/projects/${project.id}/sessions?cursor=${encodeURIComponent(first.body.next_cursor)}`,
      ).expect(200);
      expect(second.body).toEqual({ items: [expect.objectContaining({ id: all[50] })], next_cursor: null });
      expect([...ids(first.body), ...ids(second.body)]).toEqual(all);
    });

    it('accepts limit 200, rejects 201 and unknown statuses', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      await get(`/projects/${project.id}/sessions?limit=200`).expect(200);
      for (const q of ['limit=201', 'limit=0', 'status=deleted', 'role=owner']) {
        expect((await get(`/projects/${project.id}/sessions?${q}`).expect(400)).body.error.code).toBe(
          'validation_error',
        );
      }
    });

    it('answers 404 project_not_found to strangers and 409 project_archived on an archived Project', async () => {
      const project = await createManualProject(t, { accountId: owner.accountId });
      expect((await get(`/projects/${project.id}/sessions`, stranger).expect(404)).body.error.code).toBe(
        'project_not_found',
      );
      await archiveProject(t, project.id);
      expect((await get(`/projects/${project.id}/sessions`).expect(409)).body.error.code).toBe(
        'project_archived',
      );
    });
  });
});
