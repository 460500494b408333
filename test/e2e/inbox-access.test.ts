import { inboxRepository, type ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: { error?: { code: string }; item?: { id: string } } };

/**
 * Spec 1 "Access by role" for the inbox, cell by cell: every member reads, owner and deriver create,
 * only the owner decides; non-members (accounts and Clients) and other accounts get 404.
 */
describe('Project inbox: access by role', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let deriverClient: Caller;
  let observerClient: Caller;
  let project: ProjectRow;
  let foreignProject: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerClient = await createClientCaller(t, owner.accountId, 'Not a member');
    deriverClient = await createClientCaller(t, owner.accountId, 'Deriver client');
    observerClient = await createClientCaller(t, outsider.accountId, 'Observer client of another account');
    project = await createProject(t, { accountId: owner.accountId });
    foreignProject = await createProject(t, { accountId: outsider.accountId });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, deriverClient, 'deriver', { as: 'client' });
    await addMember(t, project, observerClient, 'observer', { as: 'client' });
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: ProjectRow = project) => `/projects/${p.id}/inbox`;
  const newEntry = async (p: ProjectRow = project, key = p === project ? owner.apiKey : outsider.apiKey) => {
    const res = await t.http.post(base(p)).set('x-api-key', key).send({ kind: 'k', title: 'entry' });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    return res.body.item.id as string;
  };
  /** The routes for one caller; `entry` is a fresh pending entry per route that needs one. */
  const routes = (
    key: string,
    p: ProjectRow = project,
  ): Record<string, (entry: string) => PromiseLike<Res>> => ({
    list: () => t.http.get(base(p)).set('x-api-key', key),
    create: () => t.http.post(base(p)).set('x-api-key', key).send({ kind: 'cell', title: 'by caller' }),
    get: (entry) => t.http.get(`${base(p)}/${entry}`).set('x-api-key', key),
    accept: (entry) =>
      t.http
        .post(`${base(p)}/${entry}/accept`)
        .set('x-api-key', key)
        .send({ reason: 'yes' }),
    reject: (entry) => t.http.post(`${base(p)}/${entry}/reject`).set('x-api-key', key),
  });

  const journal = async (p: ProjectRow = project) => ({
    rows: await inboxRepository.listAllOfProject(t.resources.database.db, p.id),
    events: (await projectEventRows(t, p.id)).length,
    logs: (await projectLogRows(t, p)).length,
  });

  /** Every route for one caller; a refusal must leave rows (statuses included), logs and events as they were. */
  async function row(key: string, p: ProjectRow = project) {
    const out: Record<string, string> = {};
    for (const [name, send] of Object.entries(routes(key, p))) {
      const entry = await newEntry(p);
      const before = await journal(p);
      const res = await send(entry);
      if (res.status >= 400) expect(await journal(p)).toEqual(before);
      out[name] = res.status >= 400 ? `${res.status} ${res.body.error?.code}` : String(res.status);
    }
    return out;
  }

  const DENIED = '403 project_access_denied';
  const HIDDEN = '404 project_not_found';

  it('owner: reads, creates and decides', async () => {
    expect(await row(owner.apiKey)).toEqual({
      list: '200',
      create: '201',
      get: '200',
      accept: '200',
      reject: '200',
    });
  });

  it('observer: reads; creating and deciding are 403', async () => {
    expect(await row(observer.apiKey)).toEqual({
      list: '200',
      create: DENIED,
      get: '200',
      accept: DENIED,
      reject: DENIED,
    });
  });

  it('deriver: reads and creates; deciding is 403', async () => {
    expect(await row(deriver.apiKey)).toEqual({
      list: '200',
      create: '201',
      get: '200',
      accept: DENIED,
      reject: DENIED,
    });
  });

  it('non-member account: 404 on every route', async () => {
    expect(await row(outsider.apiKey)).toEqual({
      list: HIDDEN,
      create: HIDDEN,
      get: HIDDEN,
      accept: HIDDEN,
      reject: HIDDEN,
    });
  });

  it("a Client of the owner's account that is not a member: 404 on every route", async () => {
    expect(await row(ownerClient.apiKey)).toEqual({
      list: HIDDEN,
      create: HIDDEN,
      get: HIDDEN,
      accept: HIDDEN,
      reject: HIDDEN,
    });
  });

  it('a Client made a deriver: reads and creates (as itself); deciding is 403', async () => {
    expect(await row(deriverClient.apiKey)).toEqual({
      list: '200',
      create: '201',
      get: '200',
      accept: DENIED,
      reject: DENIED,
    });
    const res = await t.http
      .post(base())
      .set('x-api-key', deriverClient.apiKey)
      .send({ kind: 'c', title: 'client' });
    expect(res.body.item).toMatchObject({
      created_by_account_id: owner.accountId,
      created_by_client_id: deriverClient.clientId,
    });
  });

  it('a Client of another account made an observer: reads only', async () => {
    expect(await row(observerClient.apiKey)).toEqual({
      list: '200',
      create: DENIED,
      get: '200',
      accept: DENIED,
      reject: DENIED,
    });
  });

  it("another account's Project: 404 project_not_found on every route for every caller of this one", async () => {
    for (const caller of [owner, observer, deriver, ownerClient, deriverClient]) {
      for (const [name, send] of Object.entries(routes(caller.apiKey, foreignProject))) {
        const res = await send(await newEntry(foreignProject));
        expect([caller.clientId, name, res.status, res.body.error?.code]).toEqual([
          caller.clientId,
          name,
          404,
          'project_not_found',
        ]);
      }
    }
    const theirs = await newEntry(foreignProject);
    const res = await t.http.get(`${base()}/${theirs}`).set('x-api-key', owner.apiKey);
    expect([res.status, res.body.error?.code]).toEqual([404, 'inbox_entry_not_found']);
    const decided = await t.http.post(`${base()}/${theirs}/accept`).set('x-api-key', owner.apiKey);
    expect([decided.status, decided.body.error?.code]).toEqual([404, 'inbox_entry_not_found']);
    expect(
      (await inboxRepository.findInProject(t.resources.database.db, foreignProject.id, theirs))?.status,
    ).toBe('pending');
  });

  it('an unknown Project: 404 project_not_found', async () => {
    const res = await t.http.get('/projects/prj_missing/inbox').set('x-api-key', owner.apiKey);
    expect([res.status, res.body.error?.code]).toEqual([404, 'project_not_found']);
  });

  it('a removed deriver loses access at once', async () => {
    const leaving = await createAccountCaller(t);
    await addMember(t, project, leaving, 'deriver');
    await t.http
      .post(base())
      .set('x-api-key', leaving.apiKey)
      .send({ kind: 'k', title: 'before' })
      .expect(201);
    await t.http
      .delete(`/projects/${project.id}/members/account/${leaving.accountId}`)
      .set('x-api-key', owner.apiKey)
      .expect(200);
    const res = await t.http
      .post(base())
      .set('x-api-key', leaving.apiKey)
      .send({ kind: 'k', title: 'after' });
    expect([res.status, res.body.error?.code]).toEqual([404, 'project_not_found']);
  });

  it('20 concurrent creators: one entry, one log and one event each, sequences without gaps', async () => {
    const busy = await createProject(t, { accountId: owner.accountId });
    await addMember(t, busy, deriver, 'deriver');
    await addMember(t, busy, deriverClient, 'deriver', { as: 'client' });
    const writers = [owner, deriver, deriverClient];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http
          .post(base(busy))
          .set('x-api-key', writers[i % writers.length].apiKey)
          .send({ kind: 'race', title: `#${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const events = await projectEventRows(t, busy.id);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.every((e) => e.type === 'inbox_entry.created')).toBe(true);
    const ids = results.map((r) => r.body.item.id).sort();
    expect(events.map((e) => (e.payload as { inbox_entry_id: string }).inbox_entry_id).sort()).toEqual(ids);
    expect(
      (await inboxRepository.listAllOfProject(t.resources.database.db, busy.id)).map((r) => r.id),
    ).toEqual(ids);
    expect((await projectLogRows(t, busy)).filter((l) => l.action === 'inbox_entry.create')).toHaveLength(20);
  });
});
