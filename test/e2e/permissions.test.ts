import {
  addMember,
  createAccountCaller,
  createClientCaller,
  defaultCaller,
  type Caller,
} from '../support/factories/members';
import { createManualProject } from '../support/factories/projects';
import { createSession, createSessionInProject, type CreatedSession } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

/**
 * Spec 1 "Access by role", cell by cell, for the Project and session routes of issue 2. Project routes
 * answer non-members 404 `project_not_found`; session routes are legacy resource routes and answer
 * them 404 `not_found`. Members whose role lacks the capability get 403 `project_access_denied`.
 */
type Kind =
  | 'owner'
  | 'observer'
  | 'deriver'
  | 'non-member account'
  | 'non-member Client of the owner account'
  | 'Client member (deriver)'
  | 'Client member (observer)'
  | 'non-default Client of an observer account';

const KINDS: Kind[] = [
  'owner',
  'observer',
  'deriver',
  'non-member account',
  'non-member Client of the owner account',
  'Client member (deriver)',
  'Client member (observer)',
  'non-default Client of an observer account',
];

type Expect = [status: number, code?: string];
const OK: Expect = [200];
const CREATED: Expect = [201];
const HIDDEN_PROJECT: Expect = [404, 'project_not_found'];
const HIDDEN: Expect = [404, 'not_found'];
const DENIED: Expect = [403, 'project_access_denied'];

/** The expected answer per caller kind: [owner, observer, deriver, non-member, client non-member, client deriver, client observer, observer's other client]. */
const read = (hidden: Expect): Expect[] => [OK, OK, OK, hidden, hidden, OK, OK, hidden];
const write = (ok: Expect, hidden: Expect): Expect[] => [
  ok,
  DENIED,
  DENIED,
  hidden,
  hidden,
  DENIED,
  DENIED,
  hidden,
];

interface RouteCase {
  name: string;
  expected: Expect[];
  call: (c: Caller) => Promise<{ status: number; body: { error?: { code: string } } }>;
}

describe('permission matrix (spec 1 "Access by role")', () => {
  let t: TestApp;
  const callers = {} as Record<Kind, Caller>;
  let project: { id: string; workspace_id: string; account_id: string };
  let session: CreatedSession;
  let foreignProjectId: string;
  let foreignSession: CreatedSession;

  beforeAll(async () => {
    t = await startTestApp();
    callers.owner = await defaultCaller(t, ADMIN_KEY);
    project = await createManualProject(t, { name: 'Matrix' });
    session = await createSessionInProject(t, project.id, { body: { title: 'Matrix session' } });

    callers.observer = await createAccountCaller(t, { name: 'Observer' });
    callers.deriver = await createAccountCaller(t, { name: 'Deriver' });
    callers['non-member account'] = await createAccountCaller(t, { name: 'Outsider' });
    callers['non-member Client of the owner account'] = await createClientCaller(
      t,
      callers.owner.accountId,
      'Plain client',
    );
    callers['Client member (deriver)'] = await createClientCaller(
      t,
      callers.owner.accountId,
      'Deriver client',
    );
    callers['Client member (observer)'] = await createClientCaller(
      t,
      callers['non-member account'].accountId,
      'Observer client',
    );
    callers['non-default Client of an observer account'] = await createClientCaller(
      t,
      callers.observer.accountId,
      'Side client',
    );
    await addMember(t, project, callers.observer, 'observer');
    await addMember(t, project, callers.deriver, 'deriver');
    await addMember(t, project, callers['Client member (deriver)'], 'deriver');
    await addMember(t, project, callers['Client member (observer)'], 'observer');

    // Another account's Project and session, to check every route hides them from the owner above.
    const foreign = await createAccountCaller(t, { name: 'Foreign' });
    foreignProjectId = (await createManualProject(t, { accountId: foreign.accountId })).id;
    foreignSession = await createSession(t, { apiKey: foreign.apiKey });
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (c: Caller) => ({
    get: (path: string) => t.http.get(path).set('x-api-key', c.apiKey),
    post: (path: string, body: object) => t.http.post(path).set('x-api-key', c.apiKey).send(body),
    patch: (path: string, body: object) => t.http.patch(path).set('x-api-key', c.apiKey).send(body),
    delete: (path: string) => t.http.delete(path).set('x-api-key', c.apiKey),
  });

  const ROUTES: RouteCase[] = [
    {
      name: 'GET /projects/:id',
      expected: read(HIDDEN_PROJECT),
      call: (c) => as(c).get(`/projects/${project.id}`),
    },
    {
      name: 'GET /projects/:id/sessions',
      expected: read(HIDDEN_PROJECT),
      call: (c) => as(c).get(`/projects/${project.id}/sessions`),
    },
    {
      name: 'POST /sessions {project_id}',
      expected: write(CREATED, HIDDEN_PROJECT),
      call: (c) => as(c).post('/sessions', { project_id: project.id }),
    },
    { name: 'GET /sessions/:id', expected: read(HIDDEN), call: (c) => as(c).get(`/sessions/${session.id}`) },
    {
      name: 'GET /sessions/:id/scope',
      expected: read(HIDDEN),
      call: (c) => as(c).get(`/sessions/${session.id}/scope`),
    },
    {
      name: 'PATCH /sessions/:id',
      expected: write(OK, HIDDEN),
      call: (c) => as(c).patch(`/sessions/${session.id}`, { title: `by ${c.clientId}` }),
    },
    {
      name: 'DELETE /sessions/:id',
      expected: write(OK, HIDDEN),
      // A fresh session per call, so the owner's successful delete does not change other cells.
      call: async (c) => as(c).delete(`/sessions/${(await createSessionInProject(t, project.id)).id}`),
    },
  ];

  describe.each(ROUTES.map((r) => [r.name, r] as const))('%s', (_name, route) => {
    it.each(KINDS.map((kind, i) => [kind, route.expected[i]] as const))(
      '%s → %j',
      async (kind, [status, code]) => {
        const res = await route.call(callers[kind]);
        expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
        if (status === 403 || status === 404) expect(JSON.stringify(res.body)).not.toContain('Matrix');
      },
    );
  });

  it('a non-member Client of the owner account gains exactly its member role once added', async () => {
    const client = await createClientCaller(t, callers.owner.accountId, 'Late joiner');
    const before = [
      await as(client).get(`/projects/${project.id}`),
      await as(client).get(`/sessions/${session.id}`),
      await as(client).patch(`/sessions/${session.id}`, { title: 'late' }),
    ];
    expect(before.map((r) => [r.status, r.body.error?.code])).toEqual([
      [404, 'project_not_found'],
      [404, 'not_found'],
      [404, 'not_found'],
    ]);
    await addMember(t, project, client, 'observer');
    const after = [
      await as(client).get(`/projects/${project.id}`),
      await as(client).get(`/sessions/${session.id}`),
      await as(client).patch(`/sessions/${session.id}`, { title: 'late' }),
    ];
    expect(after.map((r) => [r.status, r.body.error?.code])).toEqual([
      [200, undefined],
      [200, undefined],
      [403, 'project_access_denied'],
    ]);
    expect(after[0].body.role).toBe('observer');
  });

  it('a default Client holding two roles (its account’s and its own) acts with the wider one everywhere', async () => {
    // Observer as an account, deriver as its default Client: the Project detail, the list, the scope
    // and the derived-output write all see deriver (docs/decisions.md "Sessions and Projects").
    const both = await createAccountCaller(t, { name: 'Two roles' });
    const p = await createManualProject(t, { accountId: callers.owner.accountId, name: 'Two roles' });
    const s = await createSessionInProject(t, p.id, { apiKey: callers.owner.apiKey });
    await addMember(t, p, both, 'observer', { as: 'account' });
    await addMember(t, p, both, 'deriver', { as: 'client' });
    expect((await as(both).get(`/projects/${p.id}`)).body.role).toBe('deriver');
    const listed = (await as(both).get('/projects?limit=200')).body.items.find(
      (i: { id: string }) => i.id === p.id,
    );
    expect(listed.role).toBe('deriver');
    expect((await as(both).get(`/sessions/${s.id}/scope`)).body.project.role).toBe('deriver');
    const written = await as(both).post(`/projects/${p.id}/derived-outputs`, { domain: 'two-roles' });
    expect(written.status).toBe(201);
    expect(
      (await as(both).post(`/projects/${p.id}/members`, { account_id: both.accountId, role: 'observer' }))
        .status,
    ).toBe(403);
  });

  it('GET /projects lists the Project for members only, each with its own role', async () => {
    const expected: Record<Kind, string | null> = {
      owner: 'owner',
      observer: 'observer',
      deriver: 'deriver',
      'non-member account': null,
      'non-member Client of the owner account': null,
      'Client member (deriver)': 'deriver',
      'Client member (observer)': 'observer',
      'non-default Client of an observer account': null,
    };
    for (const kind of KINDS) {
      const res = await as(callers[kind]).get('/projects?limit=200').expect(200);
      const item = res.body.items.find((p: { id: string }) => p.id === project.id);
      expect([kind, item?.role ?? null]).toEqual([kind, expected[kind]]);
    }
  });

  it('GET /sessions lists the session for members only', async () => {
    for (const kind of KINDS) {
      const res = await as(callers[kind]).get('/sessions?limit=200').expect(200);
      const listed = res.body.data.some((s: { id: string }) => s.id === session.id);
      expect([kind, listed]).toEqual([kind, read(HIDDEN)[KINDS.indexOf(kind)][0] === 200]);
    }
  });

  it('the scope shows each member its own role', async () => {
    const roles = await Promise.all(
      (['owner', 'observer', 'deriver', 'Client member (deriver)', 'Client member (observer)'] as Kind[]).map(
        async (kind) =>
          (await as(callers[kind]).get(`/sessions/${session.id}/scope`).expect(200)).body.project.role,
      ),
    );
    expect(roles).toEqual(['owner', 'observer', 'deriver', 'deriver', 'observer']);
  });

  it('another account’s Project and session answer 404 on every route', async () => {
    const owner = as(callers.owner);
    const answers = [
      [await owner.get(`/projects/${foreignProjectId}`), 'project_not_found'],
      [await owner.get(`/projects/${foreignProjectId}/sessions`), 'project_not_found'],
      [await owner.post('/sessions', { project_id: foreignProjectId }), 'project_not_found'],
      [await owner.get(`/projects/${foreignSession.projectId}`), 'project_not_found'],
      [await owner.get(`/sessions/${foreignSession.id}`), 'not_found'],
      [await owner.get(`/sessions/${foreignSession.id}/scope`), 'not_found'],
      [await owner.patch(`/sessions/${foreignSession.id}`, { status: 'archived' }), 'not_found'],
      [await owner.delete(`/sessions/${foreignSession.id}`), 'not_found'],
    ] as const;
    for (const [res, code] of answers)
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 404, code });
    const list = await owner.get('/projects?limit=200').expect(200);
    expect(list.body.items.map((p: { id: string }) => p.id)).not.toContain(foreignProjectId);
    const sessions = await owner.get('/sessions?limit=200').expect(200);
    expect(sessions.body.data.map((s: { id: string }) => s.id)).not.toContain(foreignSession.id);
  });
});
