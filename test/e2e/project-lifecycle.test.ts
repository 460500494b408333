import { inboxRepository, projectsRepository, type ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: Record<string, any> };

/** `POST /projects/:id/archive` and `/restore`: access, idempotency, logs and events, and what archiving freezes. */
describe('Project archive and restore', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let deriverClient: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerClient = await createClientCaller(t, owner.accountId, 'Not a member');
    deriverClient = await createClientCaller(t, owner.accountId, 'Deriver client');
  });
  afterAll(async () => {
    await t.close();
  });

  async function memberedProject(): Promise<ProjectRow> {
    const project = await createProject(t, {
      accountId: owner.accountId,
      name: 'Lifecycle',
      description: 'd',
    });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, deriverClient, 'deriver', { as: 'client' });
    return project;
  }
  const archive = (id: string, key = owner.apiKey) =>
    t.http.post(`/projects/${id}/archive`).set('x-api-key', key);
  const restore = (id: string, key = owner.apiKey) =>
    t.http.post(`/projects/${id}/restore`).set('x-api-key', key);
  const status = async (id: string) =>
    (await projectsRepository.findProject(t.resources.database.db, id))?.status;
  const journal = async (p: ProjectRow) => ({
    status: await status(p.id),
    events: (await projectEventRows(t, p.id)).length,
    logs: (await projectLogRows(t, p)).length,
  });

  it('archives and restores: 200 with the Project object, one log and one event each', async () => {
    const project = await memberedProject();
    const detail = (await t.http.get(`/projects/${project.id}`).set('x-api-key', owner.apiKey).expect(200))
      .body;
    const archived = await archive(project.id).expect(200);
    expect(archived.body).toEqual({ ...detail, status: 'archived', updated_at: expect.any(Number) });
    expect(archived.body.updated_at).toBeGreaterThanOrEqual(detail.updated_at);
    expect(await status(project.id)).toBe('archived');

    const restored = await restore(project.id).expect(200);
    expect(restored.body).toEqual({ ...detail, status: 'active', updated_at: expect.any(Number) });
    expect(
      (await t.http.get(`/projects/${project.id}`).set('x-api-key', owner.apiKey).expect(200)).body,
    ).toEqual(restored.body);

    const events = await projectEventRows(t, project.id);
    expect(events.map((e) => [e.sequence, e.type, e.visibility])).toEqual([
      [1, 'project.archived', 'project'],
      [2, 'project.restored', 'project'],
    ]);
    expect(events[0]).toMatchObject({
      actor_account_id: owner.accountId,
      actor_client_id: owner.clientId,
      payload: { project_id: project.id, kind: 'manual', status: 'archived', previous_status: 'active' },
    });
    expect(events[1].payload).toMatchObject({ status: 'active', previous_status: 'archived' });
    const logs = await projectLogRows(t, project);
    expect(logs.map((l) => [l.action, l.target_type, l.target_id])).toEqual([
      ['archive_project', 'project', project.id],
      ['restore_project', 'project', project.id],
    ]);
    expect(events.map((e) => e.operation_log_id)).toEqual(logs.map((l) => l.id));
    // Members (observers included) see both events.
    const seen = await t.http
      .get(`/projects/${project.id}/events`)
      .set('x-api-key', observer.apiKey)
      .expect(200);
    expect(seen.body.items.map((e: { type: string }) => e.type)).toEqual([
      'project.archived',
      'project.restored',
    ]);
  });

  it('is idempotent: archiving an archived Project or restoring an active one answers 200 and writes nothing', async () => {
    const project = await memberedProject();
    expect((await restore(project.id).expect(200)).body.status).toBe('active');
    expect(await journal(project)).toEqual({ status: 'active', events: 0, logs: 0 });
    await archive(project.id).expect(200);
    const once = await journal(project);
    const again = await archive(project.id).expect(200);
    expect(again.body).toMatchObject({ id: project.id, status: 'archived', role: 'owner' });
    expect(await journal(project)).toEqual(once);
    expect(once).toEqual({ status: 'archived', events: 1, logs: 1 });
  });

  it('access: owner only; other members 403, non-members and other accounts 404; a refusal writes nothing', async () => {
    const project = await memberedProject();
    const foreign = await createProject(t, { accountId: outsider.accountId });
    const cells: Array<[string, Caller, ProjectRow, string]> = [
      ['observer', observer, project, '403 project_access_denied'],
      ['deriver', deriver, project, '403 project_access_denied'],
      ['Client made a deriver', deriverClient, project, '403 project_access_denied'],
      ['non-member account', outsider, project, '404 project_not_found'],
      ["owner account's non-member Client", ownerClient, project, '404 project_not_found'],
      ['owner of another account', owner, foreign, '404 project_not_found'],
    ];
    for (const send of [archive, restore]) {
      for (const [who, caller, p, expected] of cells) {
        if (send === restore)
          await projectsRepository.updateProjectStatus(t.resources.database.db, p.id, 'archived');
        const before = await journal(p);
        const res: Res = await send(p.id, caller.apiKey);
        expect([who, `${res.status} ${res.body.error?.code}`]).toEqual([who, expected]);
        expect(await journal(p)).toEqual(before);
      }
    }
    const missing = await archive('prj_missing');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'project_not_found']);
  });

  it('concurrent archives record the transition once', async () => {
    const project = await memberedProject();
    const results = await Promise.all(Array.from({ length: 6 }, () => archive(project.id)));
    expect(results.map((r) => [r.status, r.body.status])).toEqual(Array(6).fill([200, 'archived']));
    expect((await projectEventRows(t, project.id)).map((e) => e.type)).toEqual(['project.archived']);
    expect((await projectLogRows(t, project)).map((l) => l.action)).toEqual(['archive_project']);
  });

  it('an archive racing inbox writes: every entry that got in is recorded before the archive event', async () => {
    const project = await memberedProject();
    const inbox = `/projects/${project.id}/inbox`;
    const creates = Array.from({ length: 12 }, (_, i) =>
      t.http
        .post(inbox)
        .set('x-api-key', i % 2 ? deriver.apiKey : owner.apiKey)
        .send({ kind: 'race', title: `#${i}` }),
    );
    const [archived, ...results] = await Promise.all([archive(project.id), ...creates]);
    expect(archived.status).toBe(200);
    for (const res of results) expect([201, 409]).toContain(res.status);
    const refused = results.filter((r) => r.status === 409);
    expect(refused.every((r) => r.body.error.code === 'project_archived')).toBe(true);
    const events = await projectEventRows(t, project.id);
    const archiveAt = events.find((e) => e.type === 'project.archived')!.sequence;
    const created = events.filter((e) => e.type === 'inbox_entry.created');
    expect(created).toHaveLength(results.length - refused.length);
    expect(created.every((e) => e.sequence < archiveAt)).toBe(true);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(await inboxRepository.listAllOfProject(t.resources.database.db, project.id)).toHaveLength(
      created.length,
    );
  });

  it('an archive racing derived-output changes and session writes: each lands before the archive or is refused', async () => {
    const project = await memberedProject();
    const outputs = `/projects/${project.id}/derived-outputs`;
    const items: string[] = [];
    for (let i = 0; i < 6; i++)
      items.push(
        (
          await t.http
            .post(outputs)
            .set('x-api-key', owner.apiKey)
            .send({ domain: 'd', value: { i } })
            .expect(201)
        ).body.item.id,
      );
    const session = await createSessionRow(t, project);
    const writes = [
      ...items.slice(0, 3).map((id) =>
        t.http
          .patch(`${outputs}/${id}`)
          .set('x-api-key', owner.apiKey)
          .send({ value: { changed: id } }),
      ),
      ...items.slice(3).map((id) => t.http.delete(`${outputs}/${id}`).set('x-api-key', owner.apiKey)),
      ...Array.from({ length: 4 }, (_, i) =>
        t.http
          .post('/sessions')
          .set('x-api-key', owner.apiKey)
          .send({ project_id: project.id, title: `s${i}` }),
      ),
      t.http.patch(`/sessions/${session.id}`).set('x-api-key', owner.apiKey).send({ title: 'renamed' }),
    ];
    const [archived, ...results] = await Promise.all([archive(project.id), ...writes]);
    expect(archived.status).toBe(200);
    for (const res of results) {
      expect([200, 201, 409]).toContain(res.status);
      if (res.status === 409) expect(res.body.error.code).toBe('project_archived');
    }
    // Every change that got in is recorded before the archive event, and no session joined after it.
    const events = await projectEventRows(t, project.id);
    const archiveAt = events.find((e) => e.type === 'project.archived')!.sequence;
    const changes = events.filter((e) => e.type.startsWith('derived_output.') && e.sequence > archiveAt);
    expect(changes).toEqual([]);
    const db = t.resources.database.db;
    const archivedAt = (await projectsRepository.findProject(db, project.id))!.updated_at;
    const sessions = await db
      .selectFrom('sessions')
      .select(['created_at'])
      .where('project_id', '=', project.id)
      .execute();
    expect(sessions.filter((s) => s.created_at > archivedAt)).toEqual([]);
  });

  it('an archived Project answers 409 project_archived on its frozen routes; restore brings them back', async () => {
    const project = await memberedProject();
    const session = await createSessionRow(t, project);
    const inbox = `/projects/${project.id}/inbox`;
    const entry = (
      await t.http
        .post(inbox)
        .set('x-api-key', deriver.apiKey)
        .send({ kind: 'k', title: 'before' })
        .expect(201)
    ).body.item;
    const other = (
      await t.http
        .post(inbox)
        .set('x-api-key', deriver.apiKey)
        .send({ kind: 'k', title: 'other' })
        .expect(201)
    ).body.item;
    const key = owner.apiKey;
    const frozen: Array<[string, () => PromiseLike<Res>, number]> = [
      ['GET inbox', () => t.http.get(inbox).set('x-api-key', key), 200],
      ['POST inbox', () => t.http.post(inbox).set('x-api-key', key).send({ kind: 'k', title: 't' }), 201],
      ['GET inbox entry', () => t.http.get(`${inbox}/${entry.id}`).set('x-api-key', key), 200],
      ['accept', () => t.http.post(`${inbox}/${entry.id}/accept`).set('x-api-key', key), 200],
      ['reject', () => t.http.post(`${inbox}/${other.id}/reject`).set('x-api-key', key), 200],
      [
        'deriver POST inbox',
        () => t.http.post(inbox).set('x-api-key', deriver.apiKey).send({ kind: 'k', title: 'd' }),
        201,
      ],
      ['observer GET inbox', () => t.http.get(inbox).set('x-api-key', observer.apiKey), 200],
      ['GET project', () => t.http.get(`/projects/${project.id}`).set('x-api-key', key), 200],
      ['GET sessions', () => t.http.get(`/projects/${project.id}/sessions`).set('x-api-key', key), 200],
      [
        'GET derived outputs',
        () => t.http.get(`/projects/${project.id}/derived-outputs`).set('x-api-key', key),
        200,
      ],
      [
        'POST derived output',
        () =>
          t.http.post(`/projects/${project.id}/derived-outputs`).set('x-api-key', key).send({ domain: 'd' }),
        201,
      ],
      [
        'POST session',
        () => t.http.post('/sessions').set('x-api-key', key).send({ project_id: project.id }),
        201,
      ],
      [
        'PATCH session',
        () => t.http.patch(`/sessions/${session.id}`).set('x-api-key', key).send({ title: 'renamed' }),
        200,
      ],
    ];

    await archive(project.id).expect(200);
    const before = await journal(project);
    for (const [name, send] of frozen) {
      const res = await send();
      expect([name, res.status, res.body.error?.code]).toEqual([name, 409, 'project_archived']);
    }
    expect(await journal(project)).toEqual(before);
    // Entries stay as they were.
    const rows = await inboxRepository.listAllOfProject(t.resources.database.db, project.id);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending']);
    // Outsiders still learn nothing: 404, not 409.
    const hidden = await t.http.get(inbox).set('x-api-key', outsider.apiKey);
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'project_not_found']);
    // A non-owner member asking to decide is refused for its role before the archive check.
    const denied = await t.http.post(`${inbox}/${entry.id}/accept`).set('x-api-key', deriver.apiKey);
    expect([denied.status, denied.body.error.code]).toEqual([403, 'project_access_denied']);
    // The archived Project is listed under status=archived; its events stay readable.
    const archivedList = await t.http.get('/projects?status=archived').set('x-api-key', key).expect(200);
    expect(archivedList.body.items.map((p: { id: string }) => p.id)).toContain(project.id);
    await t.http.get(`/projects/${project.id}/events`).set('x-api-key', key).expect(200);

    await restore(project.id).expect(200);
    for (const [name, send, expected] of frozen) {
      const res = await send();
      expect([name, res.status]).toEqual([name, expected]);
    }
    const decided = (await t.http.get(inbox).set('x-api-key', key).expect(200)).body.items.filter(
      (i: { status: string }) => i.status !== 'pending',
    );
    expect(decided.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([
      [other.id, 'rejected'],
      [entry.id, 'accepted'],
    ]);
  });
});
