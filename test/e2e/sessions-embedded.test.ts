import { createManualProject } from '../support/factories/projects';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

/** The same session and Project routes on the embedded adapters (PGlite, in-process bus). */
describe('sessions and Projects in embedded mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, lists, archives and deletes a session', async () => {
    const api = (method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
      t.http[method](path).set('x-api-key', ADMIN_KEY);
    const created = (await api('post', '/sessions').send({ title: 'Embedded' }).expect(201)).body.data;
    const scope = (await api('get', `/sessions/${created.id}/scope`).expect(200)).body;
    expect(scope.project).toMatchObject({ kind: 'session_default', role: 'owner' });

    const manual = await createManualProject(t);
    await api('post', '/sessions').send({ project_id: manual.id }).expect(201);
    const projects = (await api('get', '/projects?limit=1').expect(200)).body;
    expect(projects.items).toHaveLength(1);
    const next = (await api('get', `/projects?limit=1&cursor=${projects.next_cursor}`).expect(200)).body;
    expect(next.items).toHaveLength(1);
    expect(next.items[0].id).not.toBe(projects.items[0].id);

    expect((await api('get', '/sessions').expect(200)).body.meta.total).toBe(2);
    const archived = await api('patch', `/sessions/${created.id}`).send({ status: 'archived' }).expect(200);
    expect(archived.body.data.status).toBe('archived');
    const summaries = (await api('get', `/projects/${scope.project.id}/sessions?status=archived`).expect(200))
      .body;
    expect(summaries.items.map((s: { id: string }) => s.id)).toEqual([created.id]);
    await api('delete', `/sessions/${created.id}`).expect(200);
    expect((await api('get', '/sessions').expect(200)).body.meta.total).toBe(1);
  });
});
