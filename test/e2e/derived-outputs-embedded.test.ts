import { createDerivedOutput, projectJournal } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** The same members and derived output paths on the embedded adapters (PGlite, in-process bus). */
describe('Derived outputs and members, embedded mode', () => {
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

  it('adds a deriver, writes and archives an entry, and records each write once', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const added = await t.http
      .post(`/projects/${project.id}/members`)
      .set('x-api-key', owner.apiKey)
      .send({ role: 'deriver', account_id: deriver.accountId })
      .expect(200);
    expect(added.body.item).toMatchObject({ role: 'deriver', status: 'active' });
    const conflict = await t.http
      .post(`/projects/${project.id}/members`)
      .set('x-api-key', owner.apiKey)
      .send({ role: 'observer', account_id: deriver.accountId })
      .expect(409);
    expect(conflict.body.error.code).toBe('project_member_role_conflict');

    const item = await createDerivedOutput(t, project.id, deriver.apiKey, { value: { ok: true } });
    await t.http
      .delete(`/projects/${project.id}/derived-outputs/${item.id}`)
      .set('x-api-key', deriver.apiKey)
      .expect(200);
    const journal = await projectJournal(t, project);
    expect(journal.rows.map((r) => r.status)).toEqual(['archived']);
    expect(journal.events.map((e) => [e.sequence, e.type])).toEqual([
      [1, 'project_member.added'],
      [2, 'derived_output.created'],
      [3, 'derived_output.archived'],
    ]);
    expect(journal.logs.map((l) => l.action)).toEqual([
      'project_member.add',
      'derived_output.create',
      'derived_output.archive',
    ]);
  });
});
