import { inboxRepository } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** The inbox and the Project archive/restore on the embedded adapters (PGlite, in-process bus). */
describe('Inbox and Project lifecycle, embedded mode', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
    owner = await createAccountCaller(t);
    deriver = await createAccountCaller(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, lists and decides entries, archives and restores, recording each write once', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, deriver, 'deriver');
    const inbox = `/projects/${project.id}/inbox`;
    const entry = (
      await t.http
        .post(inbox)
        .set('x-api-key', deriver.apiKey)
        .send({ kind: 'k', title: 'embedded', body: { a: 1 } })
        .expect(201)
    ).body.item;
    expect((await t.http.get(inbox).set('x-api-key', deriver.apiKey).expect(200)).body.items).toEqual([
      entry,
    ]);
    await t.http.post(`/projects/${project.id}/archive`).set('x-api-key', owner.apiKey).expect(200);
    const frozen = await t.http
      .post(`${inbox}/${entry.id}/accept`)
      .set('x-api-key', owner.apiKey)
      .expect(409);
    expect(frozen.body.error.code).toBe('project_archived');
    await t.http.post(`/projects/${project.id}/restore`).set('x-api-key', owner.apiKey).expect(200);
    await t.http
      .post(`${inbox}/${entry.id}/accept`)
      .set('x-api-key', owner.apiKey)
      .send({ reason: 'fine' })
      .expect(200);
    const again = await t.http.post(`${inbox}/${entry.id}/reject`).set('x-api-key', owner.apiKey).expect(409);
    expect(again.body.error.code).toBe('inbox_entry_already_decided');

    const rows = await inboxRepository.listAllOfProject(t.resources.database.db, project.id);
    expect(rows.map((r) => [r.status, r.decision_reason])).toEqual([['accepted', 'fine']]);
    expect((await projectEventRows(t, project.id)).map((e) => [e.sequence, e.type])).toEqual([
      [1, 'inbox_entry.created'],
      [2, 'project.archived'],
      [3, 'project.restored'],
      [4, 'inbox_entry.decided'],
    ]);
    expect((await projectLogRows(t, project)).map((l) => l.action)).toEqual([
      'inbox_entry.create',
      'archive_project',
      'restore_project',
      'inbox_entry.decide',
    ]);
  });
});
