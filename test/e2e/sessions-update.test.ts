import { createAccountWithKey } from '../support/factories/accounts';
import { createLibrary } from '../support/factories/library';
import { operationLogsRepository, projectEventsRepository } from '@hearth/persistence';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, createManualProject, findProject } from '../support/factories/projects';
import { createSession, createSessionInProject, findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

describe('sessions: PATCH and DELETE', () => {
  let t: TestApp;
  let other: Caller;

  const db = () => t.resources.database.db;
  const logsOf = (sessionId: string, accountId = 'default') =>
    operationLogsRepository.list(
      db(),
      { accountId, filters: { session_id: sessionId } },
      { limit: 100, offset: 0, sortOrder: 'asc' },
    );
  const eventsOf = (projectId: string) =>
    projectEventsRepository.listAfter(db(), {
      projectId,
      after: 0,
      visibilities: ['project', 'owner'],
      limit: 100,
    });

  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('PATCH /sessions/:id', () => {
    it('changes the title and bindings, logs update_session and writes no event', async () => {
      const library = await createLibrary(t, ADMIN_KEY);
      const s = await createSession(t, {
        body: { title: 'Old', preset_id: library.preset_id, worldbook_ids: library.worldbook_ids },
      });
      const res = await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'New', preset_id: null, worldbook_ids: [], character_id: library.character_id })
        .expect(200);
      expect(res.body.data).toMatchObject({
        title: 'New',
        preset_id: null,
        worldbook_ids: [],
        character_id: library.character_id,
        character_version_id: library.character_version_id,
        status: 'active',
      });
      expect(res.body.data.updated_at).toBeGreaterThanOrEqual(s.body.created_at as number);
      const logs = await logsOf(s.id);
      expect(logs.map((l) => l.action)).toEqual(['create_session', 'update_session']);
      expect(logs[1].metadata).toEqual({
        changed_fields: ['title', 'character_id', 'character_version_id', 'preset_id', 'worldbook_ids'],
      });
      expect(logs[1].before_ref).toMatchObject({ title: 'Old', preset_id: library.preset_id });
      expect(logs[1].after_ref).toMatchObject({ title: 'New', preset_id: null });
      expect(await eventsOf(s.projectId)).toEqual([]);
    });

    it('refuses unknown or other accounts’ assets on PATCH (404) and changes nothing', async () => {
      const s = await createSession(t, { body: { title: 'Bound' } });
      const other = await createAccountWithKey(t);
      const theirs = await createLibrary(t, other.apiKey);
      for (const [body, code] of [
        [{ preset_id: theirs.preset_id }, 'preset_not_found'],
        [{ worldbook_ids: ['wb_missing'] }, 'worldbook_not_found'],
        [{ title: 'Changed', user_card_id: theirs.user_card_id }, 'user_card_not_found'],
      ] as Array<[Record<string, unknown>, string]>) {
        const res = await t.http.patch(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).send(body);
        expect([res.status, res.body.error.code]).toEqual([404, code]);
      }
      const read = await t.http.get(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(200);
      expect(read.body.data).toMatchObject({
        title: 'Bound',
        preset_id: null,
        worldbook_ids: [],
        user_card_id: null,
      });
    });

    it('archives: status, archived_at, update_session log and one session.archived event, in one go', async () => {
      const s = await createSession(t, { body: { title: 'To archive' } });
      const res = await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      expect(res.body.data.status).toBe('archived');
      expect(res.body.data.archived_at).toEqual(expect.any(Number));

      const logs = await logsOf(s.id);
      const update = logs.find((l) => l.action === 'update_session')!;
      expect(update).toMatchObject({
        target_type: 'session',
        target_id: s.id,
        project_id: s.projectId,
        status: 'succeeded',
      });
      const events = await eventsOf(s.projectId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        sequence: 1,
        type: 'session.archived',
        visibility: 'project',
        source: 'api',
        session_id: s.id,
        actor_account_id: 'default',
        operation_log_id: update.id,
        payload: { session_id: s.id, title: 'To archive', status: 'archived', changed_fields: ['status'] },
      });

      // Archiving again changes nothing and writes nothing.
      await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      expect(await eventsOf(s.projectId)).toHaveLength(1);
      expect((await logsOf(s.id)).filter((l) => l.action === 'update_session')).toHaveLength(1);
    });

    it('answers 409 session_archived to changes of an archived session, and lets it be restored', async () => {
      const s = await createSession(t);
      await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      const res = await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'Edited' })
        .expect(409);
      expect(res.body.error.code).toBe('session_archived');
      const restored = await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'active', title: 'Back' })
        .expect(200);
      expect(restored.body.data).toMatchObject({ status: 'active', title: 'Back', archived_at: null });
      expect((await eventsOf(s.projectId)).map((e) => e.type)).toEqual(['session.archived']);
    });

    it('20 concurrent archive requests write exactly one event', async () => {
      const s = await createSession(t);
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          t.http.patch(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).send({ status: 'archived' }),
        ),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(await eventsOf(s.projectId)).toHaveLength(1);
    });

    it.each([
      ['an empty body', {}],
      ['a null title', { title: null }],
      ['a null status', { status: null }],
      ['an unknown status', { status: 'deleted' }],
      ['an unknown field', { project_id: 'prj_x' }],
      ['a null worldbook_ids', { worldbook_ids: null }],
      ['a 201-character title', { title: 'x'.repeat(201) }],
    ])('rejects %s with 400 validation_error', async (_name, body) => {
      const s = await createSession(t, { body: { title: 'Kept' } });
      const res = await t.http.patch(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).send(body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect((await findSessionRow(t, s.id))!.title).toBe('Kept');
    });

    it('answers 404 not_found for another account’s session and 409 project_archived in an archived Project', async () => {
      const theirs = await createSession(t, { apiKey: other.apiKey });
      const res = await t.http
        .patch(`/sessions/${theirs.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'x' })
        .expect(404);
      expect(res.body.error.code).toBe('not_found');

      const project = await createManualProject(t);
      const s = await createSessionInProject(t, project.id);
      await archiveProject(t, project.id);
      const archived = await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'x' })
        .expect(409);
      expect(archived.body.error.code).toBe('project_archived');
      const del = await t.http.delete(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(409);
      expect(del.body.error.code).toBe('project_archived');
      // Reading a session of an archived Project still works (its scope shows the status).
      const scope = await t.http.get(`/sessions/${s.id}/scope`).set('x-api-key', ADMIN_KEY).expect(200);
      expect(scope.body.project.status).toBe('archived');
    });
  });

  describe('DELETE /sessions/:id', () => {
    it('deletes the session for good, keeps its Project, logs delete_session and writes session.deleted', async () => {
      const s = await createSession(t, { body: { title: 'Doomed' } });
      const res = await t.http.delete(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(200);
      expect(res.body).toEqual({ data: { id: s.id, deleted: true } });
      expect(
        (await t.http.get(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(404)).body.error.code,
      ).toBe('not_found');
      expect(
        (await t.http.delete(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(404)).body.error.code,
      ).toBe('not_found');
      expect(await findSessionRow(t, s.id)).toBeUndefined();
      expect(await findProject(t, s.projectId)).toMatchObject({ kind: 'session_default', status: 'active' });
      expect((await logsOf(s.id)).map((l) => l.action)).toEqual(['create_session', 'delete_session']);
      const events = await eventsOf(s.projectId);
      expect(events.map((e) => [e.type, e.payload])).toEqual([
        ['session.deleted', { session_id: s.id, title: 'Doomed', status: 'active' }],
      ]);
    });

    it('answers 404 not_found for another account’s session and leaves it', async () => {
      const theirs = await createSession(t, { apiKey: other.apiKey });
      const res = await t.http.delete(`/sessions/${theirs.id}`).set('x-api-key', ADMIN_KEY).expect(404);
      expect(res.body.error.code).toBe('not_found');
      expect(await findSessionRow(t, theirs.id)).toBeDefined();
    });
  });
});
