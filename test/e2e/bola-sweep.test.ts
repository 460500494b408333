import { newMasterKey } from '../support/factories/llm-profiles';
import type { Caller } from '../support/factories/members';
import type { TestApp } from '../support/test-app';
import { BOLA_MARK, fill, randomLike, seedBolaWorld, tableChecksums, type Kind } from './bola-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(120_000);

/**
 * R8 (reference/performance-and-reliability.md): BOLA over every route the API serves. The routes are
 * read from the running app's router, so a new route is swept without editing this file (a parameter
 * this file cannot map fails the mapping test). Account B calls each route with a path parameter naming
 * an object, with every method the route has, using the ids of account A's objects; the answer must be
 * 404 and the same (after replacing the ids) as the answer to random ids of the same kinds ("another
 * account's object answers 404, never 403, never its data"), hold none of A's text, and no row of any
 * table may change (checksum of every table around each call). Then:
 * - routes with a parent and a child id again, with B's own parent and A's child (the child must be
 *   checked against the parent), and with all path objects B's own and A's ids in the query or body;
 * - routes without a path parameter that take an id in the query or body (EXTRAS), with A's ids;
 * - controls: A's own GETs answer 200 with the same ids (they are real objects), and the row check
 *   sees a change A makes.
 */

/**
 * Which kind a parameter names, by the literal segments before it and its name
 * (`/projects/:id/agent-bindings/:binding_id` → `projects:id`, `projects/agent-bindings:binding_id`).
 * A parameter of a new route that is in neither this map nor NOT_AN_OBJECT fails the sweep.
 */
const PARAM_KINDS: Record<string, Kind> = {
  'accounts:id': 'account',
  'backup/jobs:id': 'backupJob',
  'characters:id': 'character',
  'characters/versions:version_id': 'characterVersion',
  'chat-transfer-jobs:id': 'chatTransferJob',
  'clients:id': 'client',
  'client-data/namespaces:name': 'clientDataNamespace',
  'export/character:id': 'character',
  'export/chat:id': 'session',
  'export/preset:id': 'preset',
  'export/regex:id': 'regexProfile',
  'export/worldbook:id': 'worldbook',
  'floors:id': 'floor',
  'llm-profiles:id': 'llmProfile',
  'mcp-servers:id': 'mcpServer',
  'messages:id': 'message',
  'pages:id': 'page',
  'pages:pageId': 'page',
  'presets:id': 'preset',
  'presets/versions:version_id': 'presetVersion',
  'projects:id': 'project',
  'projects/agent-bindings:binding_id': 'binding',
  'projects/agent-jobs:job_id': 'agentJob',
  'projects/derived-outputs:item_id': 'derivedOutput',
  'projects/inbox:entry_id': 'inboxEntry',
  'projects/members:account_id': 'memberAccount',
  'projects/members:subject_id': 'memberAccount',
  'projects/node-graphs:graph_id': 'nodeGraph',
  'regex-profiles:id': 'regexProfile',
  'regex-profiles/versions:version_id': 'regexProfileVersion',
  'runs:id': 'run',
  'sessions:id': 'session',
  'sessions/branches:branchId': 'branch',
  'sessions/prompt-runtime/branches:branchId': 'branch',
  'sessions/prompt-runtime/branches/injections:injectionId': 'branchInjection',
  'sessions/prompt-runtime/injections:injectionId': 'injection',
  'temporary-conversations:id': 'temporaryConversation',
  'tool-policies:id': 'toolPolicy',
  'users:id': 'userCard',
  'variables:id': 'variable',
  'vc-tags:id': 'vcTag',
  'workspaces:id': 'workspace',
  'workspaces/agent-types:agent_type_id': 'agentType',
  'worldbooks:id': 'worldbook',
  'worldbooks/versions:version_id': 'worldbookVersion',
  'worldbooks:worldbook_id': 'worldbook',
  'worldbooks/entries:id': 'worldbookEntry',
};

/**
 * Parameters that do not name an owned object, with the value sent. The object of such a route is
 * named by another parameter or by the query (see EXTRAS), so the route is still swept.
 */
const NOT_AN_OBJECT: Record<string, string> = {
  // An enum (`account` | `client`) saying what `:subject_id` names.
  'projects/members:subject_type': 'account',
  // A model slot name (`*`, `narrator`, ...); the session whose binding is removed is in the query.
  'llm-profiles/bindings:slot': 'narrator',
};

/**
 * Routes whose answer to B is, by the spec, not 404, whatever the id (so it says nothing about A's
 * object). The answer must still equal the one to a random id, and nothing may change.
 */
const NOT_404: Record<string, { status: number; why: string }> = {
  // Spec 3 "Accounts": account routes are open only to the admin role; others get 403 account_forbidden.
  'GET /accounts/:id': { status: 403, why: 'admin-only route' },
  'PATCH /accounts/:id': { status: 403, why: 'admin-only route' },
  'DELETE /accounts/:id': { status: 403, why: 'admin-only route' },
  'POST /accounts/:id/api-keys': { status: 403, why: 'admin-only route' },
};

/**
 * Bodies (and query strings) for the routes that need one to get past validation, so that the
 * ownership check is what answers. `{kind}` in a string is replaced by the id of that kind used for the
 * call (A's, or a random one). Routes not listed are sent `{}`.
 */
const INJECTION = {
  source_kind: 'client_injection',
  title: 'Stolen',
  content: 'Stolen',
  placement: 'after_history',
};
const EXTRAS: Record<string, { body?: unknown; query?: string }> = {
  'POST /projects/:id/members': { body: { role: 'observer', account_id: '{memberAccount}' } },
  'POST /projects/:id/derived-outputs': { body: { domain: 'summary', value: { text: 'x' } } },
  'PATCH /projects/:id/derived-outputs/:item_id': { body: { status: 'archived' } },
  'POST /projects/:id/inbox': { body: { kind: 'suggestion', title: 'x' } },
  'POST /projects/:id/node-graphs': {
    body: { name: 'Stolen', graph: { nodes: [{ id: 'n0', type: 'step' }], edges: [] } },
  },
  'PATCH /projects/:id/node-graphs/:graph_id': { body: { expected_version: 1, name: 'Stolen' } },
  'PUT /projects/:id/settings/llm-profile-override': { body: { base_profile_id: '{llmProfile}' } },
  'PUT /projects/:id/settings/mcp-bindings': { body: { mcp_server_id: '{mcpServer}' } },
  'PUT /projects/:id/settings/tool-policy-overrides': { body: { base_policy_id: '{toolPolicy}' } },
  'PATCH /mcp-servers/:id': { body: { name: 'stolen' } },
  'PATCH /client-data/namespaces/:name': { body: { description: 'stolen' } },
  'PATCH /tool-policies/:id': { body: { name: 'stolen' } },
  'PATCH /sessions/:id': { body: { title: 'Stolen' } },
  'PATCH /clients/:id': { body: { name: 'Stolen' } },
  'PATCH /llm-profiles/:id': { body: { preset_name: 'Stolen' } },
  // The session whose slot binding is removed is in the query.
  'DELETE /llm-profiles/bindings/:slot': { query: 'scope=session&session_id={session}' },
  'PUT /presets/:id': { body: { name: 'Stolen', data: { prompts: [] } } },
  'POST /presets/:id/rollback': { body: { version_id: '{presetVersion}' } },
  'PUT /regex-profiles/:id': {
    body: { name: 'Stolen', data: [{ scriptName: 's', findRegex: 'a', replaceString: 'b', placement: [2] }] },
  },
  'POST /regex-profiles/:id/rollback': { body: { version_id: '{regexProfileVersion}' } },
  'PATCH /users/:id': { body: { snapshot: { name: 'Stolen' } } },
  'PATCH /characters/:id': { body: { data: { name: 'Stolen' } } },
  'POST /characters/:id/rollback': { body: { version_id: '{characterVersion}' } },
  'PUT /worldbooks/:id': { body: { name: 'Stolen', data: { entries: {} }, expected_version: 1 } },
  // The conditional form (spec 3: without expected_version, delete is unconditional and idempotent and
  // answers 204 for any id, so it tells nothing apart; test/e2e/worldbooks-isolation.test.ts covers it).
  'DELETE /worldbooks/:id': { query: 'expected_version=1' },
  'POST /worldbooks/:id/rollback': { body: { version_id: '{worldbookVersion}' } },
  'POST /worldbooks/:worldbook_id/entries': { body: { keys: ['k'], content: 'x' } },
  'PATCH /worldbooks/:worldbook_id/entries/:id': { body: { content: 'x' } },
  'PATCH /worldbooks/:worldbook_id/entries/batch/update': {
    body: { ids: ['{worldbookEntry}'], fields: { content: 'x' } },
  },
  'POST /worldbooks/:worldbook_id/entries/batch/delete': { body: { ids: ['{worldbookEntry}'] } },
  'PUT /worldbooks/:worldbook_id/entries/batch/reorder': {
    body: { items: [{ id: '{worldbookEntry}', order: 1 }] },
  },
  'POST /sessions/:id/branches/:branchId/reset': { body: { floor_id: '{floor}' } },
  'PATCH /sessions/:id/prompt-runtime/policy': { body: { structure: { mode: 'flattened' } } },
  'PATCH /sessions/:id/prompt-runtime/branches/:branchId/policy': {
    body: { structure: { mode: 'flattened' } },
  },
  'POST /sessions/:id/prompt-runtime/injections': { body: INJECTION },
  'PATCH /sessions/:id/prompt-runtime/injections/:injectionId': { body: { title: 'Stolen' } },
  'POST /sessions/:id/prompt-runtime/branches/:branchId/injections': { body: INJECTION },
  'PATCH /sessions/:id/prompt-runtime/branches/:branchId/injections/:injectionId': {
    body: { title: 'Stolen' },
  },
  'PUT /sessions/:id/prompt-runtime/mode': { body: { prompt_mode: 'native' } },
  'POST /sessions/:id/prompt-runtime/compare': {
    body: { base_floor_id: '{floor}', target_floor_id: '{floor}' },
  },
  'POST /sessions/:id/prompt-runtime/preview': { body: { text: 'x' } },
  'POST /sessions/:id/respond': { body: { message: 'x' } },
  'POST /sessions/:id/respond/stream': { body: { message: 'x' } },
  'POST /sessions/:id/respond/dry-run': { body: { message: 'x' } },
  'POST /floors/:id/retry-step': { body: { from_step_index: 1 } },
  'POST /messages/:id/edit-and-regenerate': { body: { content: 'x' } },
  'POST /temporary-conversations/:id/retry': { body: { floor_id: '{floor}' } },
  'POST /temporary-conversations/:id/retry-step': { body: { floor_id: '{floor}', from_step_index: 1 } },
  'POST /temporary-conversations/:id/export': {
    body: { target: 'page_staged_write', target_page_id: '{page}', reason: 'x' },
  },
  'POST /temporary-conversations/:id/messages': { body: { role: 'user', content: 'x' } },
  'POST /workspaces/:id/agent-types': { body: { key: 'stolen', name: 'Stolen', scope_kind: 'project' } },
  'POST /projects/:id/agent-bindings': { body: { agent_type_id: '{agentType}' } },
  'PATCH /workspaces/:id/agent-types/:agent_type_id': { body: { name: 'Stolen' } },
  'PATCH /projects/:id/agent-bindings/:binding_id': { body: { metadata: { stolen: true } } },
  'POST /llm-profiles/:id/activate': {
    body: { scope: 'session', session_id: '{session}', instance_slot: 'narrator' },
  },
  // Routes with no path parameter that take an object's id in the query or the body: swept too.
  'POST /sessions': { body: { project_id: '{project}', title: 'Stolen' } },
  'GET /operation-logs': { query: 'session_id={session}' },
  'POST /vc-tags': { body: { name: 'stolen', target_type: 'floor', target_id: '{floor}' } },
  'GET /vc-tags': { query: 'session_id={session}' },
  'PUT /variables': { body: { scope: 'chat', scope_id: '{session}', key: 'stolen', value: 1 } },
  'PUT /variables/batch': {
    body: { items: [{ scope: 'chat', scope_id: '{session}', key: 'stolen', value: 1 }] },
  },
  'GET /variables': { query: 'scope=chat&scope_id={session}' },
  'GET /variables/resolve': { query: 'session_id={session}&page_id={page}' },
  'POST /users/batch/delete': { body: { ids: ['{userCard}'] } },
  'PATCH /users/batch/status': { body: { ids: ['{userCard}'], status: 'disabled' } },
};

/**
 * The GET routes A itself does not answer 200 with its own ids, and why (the control test: A's ids are
 * real objects, so B's 404 is the ownership check answering). `null`: not called (an endless stream).
 */
const A_GET_NOT_200: Record<string, number | null> = {
  // Admin-only (A is a `user` account).
  'GET /accounts/:id': 403,
  // The Project's live event stream never ends.
  'GET /projects/:id/events/stream': null,
  // A's run was not started with `detach: true`, so its events are not kept (409 run_not_detached);
  // the run is real (GET /runs/:id answers 200).
  'GET /runs/:id/events': 409,
  // No worker runs in this test: the export jobs stay pending, so there is no file yet (404
  // artifact_not_found, a code B never gets); the jobs are real (GET .../:id answers 200).
  'GET /chat-transfer-jobs/:id/file': 404,
  'GET /backup/jobs/:id/file': 404,
};

interface Route {
  method: string;
  path: string;
}

interface Call {
  status: number;
  body: unknown;
  text: string;
}

const keyOf = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;

/** The parameters of a path with their map key: literal segments before them and the name. */
function paramsOf(path: string): Array<{ name: string; key: string }> {
  const literals: string[] = [];
  const params: Array<{ name: string; key: string }> = [];
  for (const segment of path.split('/').filter(Boolean)) {
    if (segment.startsWith(':')) {
      params.push({ name: segment.slice(1), key: `${literals.join('/')}:${segment.slice(1)}` });
    } else literals.push(segment);
  }
  return params;
}

describe('R8: BOLA sweep over every route', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;
  /** A's object of each kind, and B's own objects of the parent kinds. */
  const a = {} as Record<Kind, string>;
  const b = {} as Partial<Record<Kind, string>>;
  /** A text in A's objects that B must never see. */
  const MARK = BOLA_MARK;
  let routes: Route[] = [];
  /** One checksum per table, read in one statement. */
  let checksums: () => Promise<Record<string, string>>;

  /** Calls the route (as B unless told) with the ids of `ids` (kind → id) in the path, query and body. */
  async function call(route: Route, ids: Record<string, string>, apiKey = bob.apiKey): Promise<Call> {
    let url = route.path.replace(/:(\w+)/g, (_, name: string) => {
      const key = paramsOf(route.path).find((p) => p.name === name)!.key;
      return encodeURIComponent(NOT_AN_OBJECT[key] ?? ids[PARAM_KINDS[key]]);
    });
    const extra = EXTRAS[keyOf(route)];
    if (extra?.query) url += `?${fill(extra.query, ids) as string}`;
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const res = await t.http[method](url)
      .set('x-api-key', apiKey)
      .timeout(15_000)
      .send(fill(extra?.body ?? {}, ids) as object);
    return { status: res.status, body: res.body, text: res.text ?? '' };
  }

  /** The answer with every id of `ids` replaced by its kind, for comparing two answers. */
  const normalised = (c: Call, ids: Record<string, string>) => {
    let text = JSON.stringify({ status: c.status, body: c.body });
    for (const [kind, id] of Object.entries(ids)) text = text.split(id).join(`<${kind}>`);
    return text.replace(/"(request_id|error_id)":"[^"]*"/g, '"$1":"<x>"');
  };

  /** Random ids of every kind (same prefixes as A's). */
  const randomIds = () =>
    Object.fromEntries((Object.keys(a) as Kind[]).map((k) => [k, randomLike(a[k])])) as Record<Kind, string>;

  /** The route's parameters with their kinds, or null when one is unmapped (reported by its own test). */
  function objectParams(route: Route): Array<Kind | null> | null {
    const params = paramsOf(route.path);
    if (params.some((p) => !PARAM_KINDS[p.key] && !(p.key in NOT_AN_OBJECT))) return null;
    return params.map((p) => PARAM_KINDS[p.key] ?? null);
  }

  /** The kinds named by `{kind}` in the route's query or body. */
  const placeholderKinds = (route: Route) =>
    [...JSON.stringify(EXTRAS[keyOf(route)] ?? {}).matchAll(/\{(\w+)\}/g)].map((m) => m[1] as Kind);

  /**
   * One probe: B calls the route with `ids`, then with `random`; the first answer must have the expected
   * status (unless null), equal the second after normalising, hold none of A's text, and no table may
   * have changed. Problems are added to `failures`, named by the route.
   */
  async function probe(
    route: Route,
    label: string,
    ids: Record<string, string>,
    random: Record<string, string>,
    expected: number | null,
    failures: string[],
  ): Promise<void> {
    const before = await checksums();
    const got = await call(route, ids);
    const baseline = await call(route, random);
    const name = `${keyOf(route)}${label}`;
    if (expected !== null && got.status !== expected)
      failures.push(`${name}: B got ${got.status} ${got.text.slice(0, 300)} (expected ${expected})`);
    else if (normalised(got, ids) !== normalised(baseline, random))
      failures.push(
        `${name}: B got ${normalised(got, ids)} but for random ids ${normalised(baseline, random)}`,
      );
    if (got.text.includes(MARK))
      failures.push(`${name}: the answer holds A's data: ${got.text.slice(0, 300)}`);
    const after = await checksums();
    const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
    if (changed.length) failures.push(`${name}: rows changed in ${changed.join(', ')}`);
  }

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, {
      env: { APP_SECRETS_MASTER_KEY: newMasterKey(), ENABLE_CLIENT_DATA: 'true' },
    });
    // Account A: one object of every kind; account B: its own objects of the parent kinds.
    const world = await seedBolaWorld(t);
    ({ alice, bob } = world);
    Object.assign(a, world.a);
    Object.assign(b, world.b);

    const express = t.app.getHttpAdapter().getInstance();
    routes = (express.router.stack as Array<{ route?: { path: string; methods: Record<string, boolean> } }>)
      .filter((layer) => layer.route && typeof layer.route.path === 'string')
      .flatMap((layer) =>
        Object.keys(layer.route!.methods)
          .filter((m) => m !== '_all')
          .map((method) => ({ method, path: layer.route!.path })),
      );
    checksums = await tableChecksums(t);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('sees the routes of the app (the router walk works)', () => {
    expect(routes.length).toBeGreaterThan(150);
    expect(routes).toContainEqual({ method: 'get', path: '/sessions/:id' });
  });

  it('maps every path parameter of every route to a kind of object (or says why it is not one)', () => {
    const unmapped = routes
      .flatMap((r) => paramsOf(r.path).map((p) => `${keyOf(r)} (:${p.name}, key "${p.key}")`))
      .filter((line) => {
        const key = /key "([^"]+)"/.exec(line)![1];
        return !(key in PARAM_KINDS) && !(key in NOT_AN_OBJECT);
      });
    expect(unmapped).toEqual([]);
    const unseeded = [...new Set(Object.values(PARAM_KINDS))].filter((k) => !a[k]);
    expect(unseeded).toEqual([]);
  });

  it("answers B 404 on every route with A's ids, exactly like random ids, and changes nothing", async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const kinds = objectParams(route);
      if (!kinds || kinds.every((k) => k === null)) continue;
      await probe(route, '', a, randomIds(), NOT_404[keyOf(route)]?.status ?? 404, failures);
    }
    expect(failures).toEqual([]);
  });

  it("answers B with its own parent and A's child exactly like a random child: 404, nothing changed", async () => {
    const failures: string[] = [];
    const probed: string[] = [];
    for (const route of routes) {
      const kinds = objectParams(route)?.filter((k): k is Kind => k !== null);
      if (!kinds || kinds.length === 0) continue;
      // Path: the first n object parameters B's own, the rest A's (n = 1 .. all but one).
      const splits: Array<{ own: number; label: string; expected: number | null }> = [];
      for (let own = 1; own < kinds.length; own++)
        splits.push({ own, label: ` [B's ${kinds.slice(0, own).join(', ')}]`, expected: 404 });
      // Body and query: every path object B's own, the ids in the body A's. Accounts named in a body
      // (adding a member) are not objects of A. The answer need not be 404 (a batch may skip unknown ids)
      // but must be the random ids' answer.
      const inBody = placeholderKinds(route);
      if (inBody.length && !inBody.some((k) => k === 'account' || k === 'memberAccount'))
        splits.push({
          own: kinds.length,
          label: ` [B's ${kinds.join(', ')}, A's ${inBody.join(', ')} in the body]`,
          expected: null,
        });
      for (const { own, label, expected } of splits) {
        const ownKinds = kinds.slice(0, own);
        const missing = ownKinds.filter((k) => !b[k]);
        if (missing.length) {
          failures.push(`${keyOf(route)}${label}: B has no own ${missing.join(', ')} (seed one)`);
          continue;
        }
        const mine = Object.fromEntries(ownKinds.map((k) => [k, b[k]!]));
        probed.push(`${keyOf(route)}${label}`);
        await probe(route, label, { ...a, ...mine }, { ...randomIds(), ...mine }, expected, failures);
      }
    }
    expect(failures).toEqual([]);
    // The sweep reached the nested routes (it cannot pass by probing nothing).
    expect(probed).toEqual(
      expect.arrayContaining([
        "PATCH /worldbooks/:worldbook_id/entries/:id [B's worldbook]",
        "DELETE /sessions/:id/prompt-runtime/branches/:branchId/injections/:injectionId [B's session, branch]",
        "POST /projects/:id/agent-bindings/:binding_id/run [B's project]",
        "PUT /worldbooks/:worldbook_id/entries/batch/reorder [B's worldbook, A's worldbookEntry in the body]",
      ]),
    );
  });

  it("answers B on routes taking A's ids in the query or body exactly like random ids, nothing changed", async () => {
    const failures: string[] = [];
    const probed: string[] = [];
    for (const route of routes) {
      const kinds = objectParams(route);
      if (!kinds || kinds.some((k) => k !== null) || placeholderKinds(route).length === 0) continue;
      probed.push(keyOf(route));
      await probe(route, '', a, randomIds(), null, failures);
    }
    expect(failures).toEqual([]);
    expect(probed).toEqual(expect.arrayContaining(['POST /sessions', 'PUT /variables', 'POST /vc-tags']));
  });

  it("A's ids are real: A reads each GET route with them (so B's 404s are about ownership)", async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.method === 'get')) {
      const kinds = objectParams(route);
      if (!kinds || kinds.every((k) => k === null)) continue;
      const expected = A_GET_NOT_200[keyOf(route)] === undefined ? 200 : A_GET_NOT_200[keyOf(route)];
      if (expected === null) continue;
      const res = await call(route, a, alice.apiKey);
      if (res.status !== expected)
        failures.push(
          `${keyOf(route)}: A got ${res.status} ${res.text.slice(0, 200)} (expected ${expected})`,
        );
    }
    expect(failures).toEqual([]);
  });

  it('the row check sees a change (it is not blind)', async () => {
    const before = await checksums();
    const res = await t.http
      .patch(`/sessions/${a.session}`)
      .set('x-api-key', alice.apiKey)
      .send({ title: 'Changed by A' });
    expect(res.status).toBe(200);
    const after = await checksums();
    expect(Object.keys(after).filter((k) => after[k] !== before[k])).toContain('sessions');
  });
});
