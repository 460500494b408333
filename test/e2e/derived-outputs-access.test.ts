import type { ProjectRow } from '@hearth/persistence';
import {
  createDerivedOutput,
  derivedOutputRows,
  projectEventRows,
  projectJournal,
  projectLogRows,
  type DerivedOutputJson,
} from '../support/factories/derived-outputs';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Spec 1 "Access by role" for the derived output routes, cell by cell: owner, observer, deriver,
 * non-member, a Client that is not a member, a Client made a member; plus concurrent writers.
 */
describe('Derived outputs: access and concurrency', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let otherDeriver: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let memberClient: Caller;
  let project: ProjectRow;
  let foreignProject: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    otherDeriver = await createAccountCaller(t, { name: 'Other deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerClient = await createClientCaller(t, owner.accountId, 'Not a member');
    memberClient = await createClientCaller(t, owner.accountId, 'Deriver client');
    project = await createProject(t, { accountId: owner.accountId });
    foreignProject = await createProject(t, { accountId: outsider.accountId });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, otherDeriver, 'deriver');
    await addMember(t, project, memberClient, 'deriver', { as: 'client' });
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: ProjectRow = project) => `/projects/${p.id}/derived-outputs`;
  type Res = { status: number; body: { error?: { code: string }; item?: DerivedOutputJson } };
  const routes = (
    key: string,
    itemId: string,
    p: ProjectRow = project,
  ): Record<string, () => PromiseLike<Res>> => ({
    list: () => t.http.get(base(p)).set('x-api-key', key),
    create: () =>
      t.http
        .post(base(p))
        .set('x-api-key', key)
        .send({ domain: 'cell', value: { by: key.slice(0, 8) } }),
    get: () => t.http.get(`${base(p)}/${itemId}`).set('x-api-key', key),
    patch: () =>
      t.http
        .patch(`${base(p)}/${itemId}`)
        .set('x-api-key', key)
        .send({ value: { patched: true } }),
    delete: () => t.http.delete(`${base(p)}/${itemId}`).set('x-api-key', key),
  });

  /** Sends one request; on a refusal, checks that the Project's rows, logs and events are unchanged. */
  async function cell(send: () => PromiseLike<Res>): Promise<string> {
    const before = await projectJournal(t, project);
    const res = await send();
    if (res.status >= 400) {
      const after = await projectJournal(t, project);
      expect(after.rows).toEqual(before.rows);
      expect([after.events.length, after.logs.length]).toEqual([before.events.length, before.logs.length]);
      return `${res.status} ${res.body.error?.code}`;
    }
    return String(res.status);
  }

  async function row(key: string, entryOf: () => Promise<DerivedOutputJson>) {
    const out: Record<string, string> = {};
    for (const [name, send] of Object.entries(routes(key, (await entryOf()).id)))
      out[name] = await cell(send);
    return out;
  }

  const ownEntry = (caller: Caller) => () => createDerivedOutput(t, project.id, caller.apiKey);
  const ownersEntry = () => createDerivedOutput(t, project.id, owner.apiKey);

  it('owner: reads and writes every entry', async () => {
    expect(await row(owner.apiKey, () => createDerivedOutput(t, project.id, deriver.apiKey))).toEqual({
      list: '200',
      create: '201',
      get: '200',
      patch: '200',
      delete: '200',
    });
  });

  it('observer: reads; every write is 403 derived_output_write_denied', async () => {
    expect(await row(observer.apiKey, ownersEntry)).toEqual({
      list: '200',
      create: '403 derived_output_write_denied',
      get: '200',
      patch: '403 derived_output_write_denied',
      delete: '403 derived_output_write_denied',
    });
  });

  it('deriver: reads and writes its own entries', async () => {
    expect(await row(deriver.apiKey, ownEntry(deriver))).toEqual({
      list: '200',
      create: '201',
      get: '200',
      patch: '200',
      delete: '200',
    });
  });

  it("deriver: another's entry is 403 derived_output_forbidden_for_role and stays unchanged", async () => {
    const theirs = await createDerivedOutput(t, project.id, otherDeriver.apiKey, { value: { mine: true } });
    const r = routes(deriver.apiKey, theirs.id);
    expect(await cell(r.patch)).toBe('403 derived_output_forbidden_for_role');
    expect(await cell(r.delete)).toBe('403 derived_output_forbidden_for_role');
    const status = await t.http
      .patch(`${base()}/${theirs.id}`)
      .set('x-api-key', deriver.apiKey)
      .send({ status: 'published' });
    expect(status.body.error.code).toBe('derived_output_forbidden_for_role');
    expect((await derivedOutputRows(t, project.id)).find((r) => r.id === theirs.id)).toMatchObject({
      status: 'draft',
      value: { mine: true },
      updated_at: theirs.updated_at,
    });
    const owners = await ownersEntry();
    expect(await cell(routes(deriver.apiKey, owners.id).patch)).toBe('403 derived_output_forbidden_for_role');
  });

  it('non-member account: 404 project_not_found on every route', async () => {
    expect(await row(outsider.apiKey, ownersEntry)).toEqual({
      list: '404 project_not_found',
      create: '404 project_not_found',
      get: '404 project_not_found',
      patch: '404 project_not_found',
      delete: '404 project_not_found',
    });
  });

  it("a Client of the owner's account that is not a member: 404 project_not_found on every route", async () => {
    expect(await row(ownerClient.apiKey, ownersEntry)).toEqual({
      list: '404 project_not_found',
      create: '404 project_not_found',
      get: '404 project_not_found',
      patch: '404 project_not_found',
      delete: '404 project_not_found',
    });
  });

  it('a Client made a deriver: writes its own entries only, even those of its own account are not its own', async () => {
    expect(await row(memberClient.apiKey, ownEntry(memberClient))).toEqual({
      list: '200',
      create: '201',
      get: '200',
      patch: '200',
      delete: '200',
    });
    const created = await createDerivedOutput(t, project.id, memberClient.apiKey);
    expect(created.owner_account_id).toBe(owner.accountId);
    expect(await cell(routes(memberClient.apiKey, (await ownersEntry()).id).patch)).toBe(
      '403 derived_output_forbidden_for_role',
    );
    // The owner may change what the Client made.
    expect(await cell(routes(owner.apiKey, created.id).patch)).toBe('200');
  });

  it("another account's Project: 404 project_not_found on every route, for its owner's peers too", async () => {
    const theirs = await createDerivedOutput(t, foreignProject.id, outsider.apiKey);
    for (const caller of [owner, deriver, memberClient]) {
      for (const [name, send] of Object.entries(routes(caller.apiKey, theirs.id, foreignProject))) {
        const res = await send();
        expect([name, res.status, res.body.error?.code]).toEqual([name, 404, 'project_not_found']);
      }
    }
    // An entry id of another Project is not found through this one.
    const res = await t.http.get(`${base()}/${theirs.id}`).set('x-api-key', owner.apiKey);
    expect([res.status, res.body.error?.code]).toEqual([404, 'derived_output_not_found']);
  });

  it('a removed deriver loses write access at once', async () => {
    const leaving = await createAccountCaller(t);
    await addMember(t, project, leaving, 'deriver');
    const entry = await createDerivedOutput(t, project.id, leaving.apiKey);
    await t.http
      .delete(`/projects/${project.id}/members/account/${leaving.accountId}`)
      .set('x-api-key', owner.apiKey)
      .expect(200);
    expect(await cell(routes(leaving.apiKey, entry.id).patch)).toBe('404 project_not_found');
  });

  it('20 concurrent writers on one Project: sequences 1..20 exactly once, one row and one log each', async () => {
    const busy = await createProject(t, { accountId: owner.accountId });
    await addMember(t, busy, deriver, 'deriver');
    await addMember(t, busy, otherDeriver, 'deriver');
    const writers = [owner, deriver, otherDeriver, memberClient];
    await addMember(t, busy, memberClient, 'deriver', { as: 'client' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http
          .post(base(busy))
          .set('x-api-key', writers[i % writers.length].apiKey)
          .send({ domain: 'race', value: { i } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const events = await projectEventRows(t, busy.id);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.every((e) => e.type === 'derived_output.created')).toBe(true);
    const ids = results.map((r) => r.body.item.id).sort();
    expect(events.map((e) => (e.payload as { derived_output_id: string }).derived_output_id).sort()).toEqual(
      ids,
    );
    expect((await derivedOutputRows(t, busy.id)).map((r) => r.id)).toEqual(ids);
    expect((await projectLogRows(t, busy)).filter((l) => l.action === 'derived_output.create')).toHaveLength(
      20,
    );
  });
});
