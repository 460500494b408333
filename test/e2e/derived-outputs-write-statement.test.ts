import { sql } from 'kysely';
import { projectEventsRepository, projectsRepository, type ProjectRow } from '@hearth/persistence';
import { projectJournal } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * `POST /projects/:id/derived-outputs` writes the entry, its operation log, the counter bump and the
 * event in one statement: a failure anywhere in it leaves nothing, and the Project row is
 * share-locked, so an archive in progress is waited for and then refuses the write.
 */
describe('Derived output create: one statement', () => {
  let t: TestApp;
  let owner: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    project = await createProject(t, { accountId: owner.accountId });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (p: ProjectRow = project) =>
    t.http
      .post(`/projects/${p.id}/derived-outputs`)
      .set('x-api-key', owner.apiKey)
      .send({ domain: 'summary', value: { text: 'one statement' } });

  it('an event insert that fails leaves no row, no log, no event and no counter bump', async () => {
    const db = t.resources.database.db;
    await post().expect(201);
    const before = await projectJournal(t, project);
    const counterBefore = await projectEventsRepository.lastSequence(db, project.id);
    // Fault injection: the event insert of this Project fails inside the statement.
    await sql
      .raw(
        `CREATE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'injected event failure'; END $$;
         CREATE TRIGGER test_refuse_event BEFORE INSERT ON project_events FOR EACH ROW
         WHEN (NEW.project_id = '${project.id}') EXECUTE FUNCTION test_refuse_event();`,
      )
      .execute(db);
    try {
      const res = await post();
      expect({ status: res.status, code: res.body.error?.code }).toEqual({
        status: 500,
        code: 'internal_error',
      });
    } finally {
      await sql
        .raw('DROP TRIGGER test_refuse_event ON project_events; DROP FUNCTION test_refuse_event();')
        .execute(db);
    }
    const after = await projectJournal(t, project);
    expect(after.rows).toEqual(before.rows);
    expect(after.logs).toEqual(before.logs);
    expect(after.events).toEqual(before.events);
    expect(await projectEventsRepository.lastSequence(db, project.id)).toBe(counterBefore);
    // The next write takes the next sequence: nothing was lost or skipped.
    await post().expect(201);
    const [last] = (await projectJournal(t, project)).events.slice(-1);
    expect(last.sequence).toBe(counterBefore + 1);
  });

  it('waits for an archive in progress and then answers 409 project_archived, writing nothing', async () => {
    const db = t.resources.database.db;
    const target = await createProject(t, { accountId: owner.accountId });
    const before = await projectJournal(t, target);
    let pending: Promise<{ status: number; body: { error?: { code: string } } }> | undefined;
    await db.transaction().execute(async (tx) => {
      // An archive's first steps: the Project row locked for update and its status changed.
      await projectsRepository.lockProject(tx, target.id, 'update');
      await projectsRepository.updateProjectStatus(tx, target.id, 'archived');
      pending = post(target).then((res) => res);
      // Commit only once the create is waiting for the Project row.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const waiting = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
        if (waiting.rows[0].n > 0) break;
        if (Date.now() > deadline) throw new Error('the create never waited for the Project row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const res = await pending!;
    expect({ status: res.status, code: res.body.error?.code }).toEqual({
      status: 409,
      code: 'project_archived',
    });
    const after = await projectJournal(t, target);
    expect(after).toEqual(before);
  });
});
