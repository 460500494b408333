import type { ProjectRow } from '@hearth/persistence';
import { createAgentBinding, createAgentType } from '../support/factories/agent-runs';
import { createAssetVersion } from '../support/factories/conversation';
import { addMember, createAccountCaller, defaultCaller } from '../support/factories/members';
import { findProject } from '../support/factories/projects';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { createInternalTemporary, createTemporary } from './temporary-conversations-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(90_000);

type Check = [method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Record<string, unknown>];

/**
 * A temporary conversation's session, branch, floors, pages, messages, runs and variables are no
 * objects of the normal routes (spec 2: isolated drafts, not listed with normal sessions): every route
 * that names one answers 404 and writes nothing, including the routes that take them as references
 * (derived output and inbox sources, vc-tags, variables, agent runs). test/e2e/temporary-conversations.test.ts
 * covers the session, floor, page and message routes themselves.
 */
describe('temporary conversations: hidden from the routes that reference sessions', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const send = ([method, path, body]: Check, key = ADMIN_KEY) => {
    const req =
      method === 'GET'
        ? t.http.get(path)
        : method === 'PUT'
          ? t.http.put(path).send(body ?? {})
          : method === 'DELETE'
            ? t.http.delete(path)
            : t.http.post(path).send(body ?? {});
    return req.set('x-api-key', key);
  };

  /** The rows a refused reference would have written. */
  const written = async (project: ProjectRow) => {
    const db = t.resources.database.db;
    const count = async (table: 'derived_outputs' | 'inbox_entries' | 'vc_tags' | 'variables' | 'jobs') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      derived_outputs: await count('derived_outputs'),
      inbox_entries: await count('inbox_entries'),
      vc_tags: await count('vc_tags'),
      variables: await count('variables'),
      jobs: await count('jobs'),
      project: project.id,
    };
  };

  it('references to its session, branch, floor, page and run answer 404 and write nothing', async () => {
    const source = await createSession(t, { body: { title: 'Source' } });
    const project = (await findProject(t, source.projectId))!;
    const c = await createTemporary(t, { sessionId: source.id });
    fake.script({ reply: 'Temp reply.' });
    const res = await t.http
      .post(`/temporary-conversations/${c.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ input_message: { role: 'user', content: 'Hi' } });
    expect(res.status).toBe(200);
    const floorId = res.body.data.floor_id as string;
    const pageId = res.body.data.page_id as string;
    const db = t.resources.database.db;
    const branch = await db
      .selectFrom('branches')
      .selectAll()
      .where('session_id', '=', c.id)
      .executeTakeFirstOrThrow();
    const run = await db
      .selectFrom('generation_runs')
      .selectAll()
      .where('session_id', '=', c.id)
      .executeTakeFirstOrThrow();
    const caller = await defaultCaller(t, ADMIN_KEY);
    const version = await createAssetVersion(t, caller.accountId, { kind: 'worldbook' });
    const binding = await createAgentBinding(
      t,
      await createAgentType(t, caller.accountId, { scopeKind: 'floor' }),
      project,
    );
    const before = await written(project);

    const checks: Array<[Check, string]> = [
      [['GET', `/export/chat/${c.id}`], 'not_found'],
      [['POST', `/export/chat/${c.id}/jobs`, {}], 'session_not_found'],
      [['POST', `/sessions/${c.id}/branches/${branch.id}/reset`, { floor_id: floorId }], 'not_found'],
      [['GET', `/sessions/${c.id}/prompt-runtime/branches/${branch.id}/policy`], 'session_not_found'],
      [['GET', `/sessions/${c.id}/prompt-runtime/branches/${branch.id}/injections`], 'session_not_found'],
      [['POST', `/sessions/${c.id}/prompt-runtime/preview`, { text: 'x' }], 'session_not_found'],
      [['POST', `/sessions/${c.id}/prompt-runtime/inspect`, { message: 'x' }], 'session_not_found'],
      [
        [
          'POST',
          `/sessions/${c.id}/prompt-runtime/compare`,
          { base_floor_id: floorId, target_floor_id: floorId },
        ],
        'session_not_found',
      ],
      [['GET', `/sessions/${c.id}/prompt-runtime/assets`], 'session_not_found'],
      [['GET', `/sessions/${c.id}/prompt-runtime/mode`], 'session_not_found'],
      [['GET', `/floors/${floorId}/prompt-runtime/explain`], 'floor_not_found'],
      [['POST', `/floors/${floorId}/retry-step`, { from_step_index: 1 }], 'floor_not_found'],
      [['GET', `/runs/${run.id}`], 'run_not_found'],
      [['POST', `/runs/${run.id}/cancel`, {}], 'run_not_found'],
      [['GET', `/llm-profiles/runtime?session_id=${c.id}`], 'session_scope_not_found'],
      // Variables: its session, branch, floor and page are no hosts.
      [
        ['PUT', `/variables`, { scope: 'chat', scope_id: c.id, key: 'k', value: 1 }],
        'variable_host_not_found',
      ],
      [
        [
          'PUT',
          `/variables`,
          { scope: 'branch', session_id: c.id, branch_id: branch.id, key: 'k', value: 1 },
        ],
        'variable_host_not_found',
      ],
      [
        ['PUT', `/variables`, { scope: 'floor', scope_id: floorId, key: 'k', value: 1 }],
        'variable_host_not_found',
      ],
      [
        ['PUT', `/variables`, { scope: 'page', scope_id: pageId, key: 'k', value: 1 }],
        'variable_host_not_found',
      ],
      [
        ['PUT', `/variables/batch`, { items: [{ scope: 'floor', scope_id: floorId, key: 'k', value: 1 }] }],
        'variable_host_not_found',
      ],
      [['GET', `/variables/resolve?session_id=${c.id}&floor_id=${floorId}`], 'variable_host_not_found'],
      [['GET', `/pages/${pageId}/variables/staged`], 'page_not_found'],
      [['GET', `/pages/${pageId}/variables/promotions`], 'page_not_found'],
      // Derived output and inbox sources.
      ...(
        [
          ['source_session_id', c.id, 'session_not_found'],
          ['source_floor_id', floorId, 'floor_not_found'],
          ['source_page_id', pageId, 'page_not_found'],
        ] as const
      ).flatMap(([field, id, code]): Array<[Check, string]> => [
        [['POST', `/projects/${project.id}/derived-outputs`, { domain: 'd', value: {}, [field]: id }], code],
        [['POST', `/projects/${project.id}/inbox`, { kind: 'suggestion', title: 't', [field]: id }], code],
      ]),
      // vc-tags: a floor target, and the session of an asset-version tag.
      [
        ['POST', `/vc-tags`, { name: 'tmp-floor', target_type: 'floor', target_id: floorId }],
        'floor_not_found',
      ],
      [
        [
          'POST',
          `/vc-tags`,
          { name: 'tmp-av', target_type: 'asset_version', target_id: version.id, session_id: c.id },
        ],
        'session_not_found',
      ],
      // Agent runs placed on its session or floor.
      [
        [
          'POST',
          `/projects/${project.id}/agent-bindings/${binding.id}/run`,
          { input_json: { floor_id: floorId } },
        ],
        'floor_not_found',
      ],
      [
        [
          'POST',
          `/projects/${project.id}/agent-bindings/${binding.id}/run`,
          { input_json: { session_id: c.id, floor_id: floorId } },
        ],
        'session_not_found',
      ],
    ];
    for (const [check, code] of checks) {
      const r = await send(check);
      expect({ route: `${check[0]} ${check[1]}`, status: r.status, code: r.body.error?.code }).toEqual({
        route: `${check[0]} ${check[1]}`,
        status: 404,
        code,
      });
    }
    expect(await written(project)).toEqual(before);
  });

  it('variables its turns wrote are not listed, read or deleted by the variable routes', async () => {
    const source = await createSession(t, { body: { title: 'Source' } });
    const c = await createTemporary(t, { sessionId: source.id });
    const res = await t.http
      .post(`/temporary-conversations/${c.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ input_message: { role: 'user', content: 'draft {{setvar::draft_secret::hidden}}' } });
    expect(res.status).toBe(200);
    const own = await t.resources.database.db
      .selectFrom('variables')
      .selectAll()
      .where('session_id', '=', c.id)
      .execute();
    // The turn did write one (the floor variable of its `setvar`): the routes must not show it.
    expect(own.map((v) => v.key)).toContain('draft_secret');
    const list = await t.http.get('/variables?limit=200').set('x-api-key', ADMIN_KEY);
    expect(list.status).toBe(200);
    expect(list.body.data.map((v: { id: string }) => v.id)).not.toEqual(expect.arrayContaining([own[0].id]));
    const byHost = await t.http
      .get(`/variables?scope=floor&scope_id=${res.body.data.floor_id}`)
      .set('x-api-key', ADMIN_KEY);
    expect(byHost.body.data).toEqual([]);
    for (const check of [
      ['GET', `/variables/${own[0].id}`],
      ['DELETE', `/variables/${own[0].id}`],
    ] as Check[]) {
      const r = await send(check);
      expect({ route: check.join(' '), status: r.status }).toEqual({ route: check.join(' '), status: 404 });
    }
    expect(
      await t.resources.database.db
        .selectFrom('variables')
        .select('id')
        .where('id', '=', own[0].id)
        .executeTakeFirst(),
    ).toBeDefined();
  });

  it('an internal conversation answers 404, not 403, to a member whose role lacks the capability', async () => {
    const source = await createSession(t, { body: { title: 'Source' } });
    const observer = await createAccountCaller(t, { name: 'Observer' });
    await addMember(t, (await findProject(t, source.projectId))!, observer, 'observer');
    const internal = await createInternalTemporary(t, { session_id: source.id });
    for (const check of [
      ['POST', `/temporary-conversations/${internal.session_id}/messages`, { role: 'user', content: 'x' }],
      ['POST', `/temporary-conversations/${internal.session_id}/respond`, {}],
      ['POST', `/temporary-conversations/${internal.session_id}/finalize`, {}],
      ['GET', `/temporary-conversations/${internal.session_id}`],
    ] as Check[]) {
      const r = await send(check, observer.apiKey);
      expect({ route: check[1], status: r.status, code: r.body.error?.code }).toEqual({
        route: check[1],
        status: 404,
        code: 'conversation_not_found',
      });
    }
    // Inspect reads it (restricted).
    const inspect = await send(
      ['GET', `/temporary-conversations/${internal.session_id}/inspect`],
      observer.apiKey,
    );
    expect(inspect.status).toBe(200);
    expect(inspect.body.data.transcript_restricted).toBe(true);
  });
});
