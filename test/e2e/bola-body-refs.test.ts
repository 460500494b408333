import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newMasterKey } from '../support/factories/llm-profiles';
import { extJsonlChat } from '../support/factories/chat-transfer';
import type { Caller } from '../support/factories/members';
import { createSessionInProject } from '../support/factories/sessions';
import type { TestApp } from '../support/test-app';
import { createAgentType, createBinding } from './agents-support';
import { BOLA_MARK, fill, randomLike, seedBolaWorld, tableChecksums, type Kind } from './bola-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(120_000);

/**
 * R8 (reference/performance-and-reliability.md), the other half of bola-sweep.test.ts: ids that a request
 * names inside its BODY or QUERY. Account B sends account A's id in such a field on B's OWN objects (its
 * session, Project, Workspace, binding, ...). The answer must equal the answer to a random id of the same
 * kind (after replacing the ids by their kinds): that is, the kind's 404 (or the route's documented
 * status for an unknown id), and an empty list for a list filter; it must hold none of A's text, and no
 * row of any table may change, so B's object is not bound to A's object and A's data is untouched.
 *
 * The answer to the random id is checked against the expected status and code of each case first, so a
 * case cannot pass by both calls failing validation.
 *
 * Placeholders: `{kind}` is A's object of that kind (or, in the baseline call, a random id of the same
 * prefix); `{b:kind}` is B's own object of that kind (the same in both calls).
 */

interface RefCase {
  /** The route, as the controllers declare it. */
  route: string;
  /** The body or query field naming an object. */
  field: string;
  /** The concrete path (placeholders allowed). */
  path: string;
  query?: string;
  body?: unknown;
  /** The answer to a random id: status, and the error code unless it is a success. */
  expect: [number, string?];
  /**
   * A list whose filter names A's object without any of B's objects: A, asking the same, gets a
   * different (non-empty) answer, so B's empty answer is the ownership check and not an empty table.
   */
  aSees?: true;
}

const MESSAGE = 'hi';

/**
 * Every body or query field of the API that names another object, by route. A field covered by
 * bola-sweep.test.ts's EXTRAS (whose nested sweep already sends A's ids in the body on B's own path
 * objects) is named in COVERED_ELSEWHERE instead.
 */
const CASES: RefCase[] = [
  // ---- Sessions: library bindings (CONTRACT.md "Sessions"; each must be a live asset of the account).
  ...(['post', 'patch'] as const).flatMap((method): RefCase[] => {
    const route = method === 'post' ? 'POST /sessions' : 'PATCH /sessions/:id';
    const path = method === 'post' ? '/sessions' : '/sessions/{b:session}';
    const c = (field: string, body: object, expect: [number, string?]): RefCase => ({
      route,
      field,
      path,
      body,
      expect,
    });
    return [
      c('character_id', { character_id: '{character}' }, [404, 'character_not_found']),
      c('character_version_id', { character_version_id: '{characterVersion}' }, [
        404,
        'character_version_not_found',
      ]),
      // B's own character with A's version of another character.
      c(
        'character_version_id (with own character_id)',
        { character_id: '{b:character}', character_version_id: '{characterVersion}' },
        [404, 'character_version_not_found'],
      ),
      c('user_card_id', { user_card_id: '{userCard}' }, [404, 'user_card_not_found']),
      c('preset_id', { preset_id: '{preset}' }, [404, 'preset_not_found']),
      c('worldbook_ids', { worldbook_ids: ['{worldbook}'] }, [404, 'worldbook_not_found']),
      c('worldbook_ids (after an own one)', { worldbook_ids: ['{b:worldbook}', '{worldbook}'] }, [
        404,
        'worldbook_not_found',
      ]),
      c('regex_profile_id', { regex_profile_id: '{regexProfile}' }, [404, 'regex_profile_not_found']),
    ];
  }),

  // ---- Chat import: the character to bind (spec 3 "Chat files": 400 character_not_found).
  ...['POST /import/chat', 'POST /import/chat/jobs'].map((route): RefCase => ({
    route,
    field: 'character_id',
    path: route.slice(5),
    body: { data: extJsonlChat(1), character_id: '{character}' },
    expect: [400, 'character_not_found'],
  })),

  // ---- Characters: a version of B's own character, named in the query.
  {
    route: 'GET /export/character/:id',
    field: 'version_id',
    path: '/export/character/{b:character}',
    query: 'version_id={characterVersion}',
    // The export routes answer the legacy `not_found` code (bola-sweep.test.ts's note).
    expect: [404, 'not_found'],
  },
  {
    route: 'GET /characters/:id/lorebook',
    field: 'version_id',
    path: '/characters/{b:character}/lorebook',
    query: 'version_id={characterVersion}',
    expect: [404, 'asset_version_not_found'],
  },

  // ---- Agent Types (defaults) and Agent Bindings (overrides): profile and policy of the Workspace.
  ...(['llm_profile_id', 'tool_policy_id'] as const).flatMap((field): RefCase[] => {
    const id = field === 'llm_profile_id' ? '{llmProfile}' : '{toolPolicy}';
    const code = field === 'llm_profile_id' ? 'profile_not_found' : 'tool_policy_not_found';
    return [
      {
        route: 'POST /workspaces/:id/agent-types',
        field: `defaults.${field}`,
        path: '/workspaces/{b:workspace}/agent-types',
        body: { key: `stolen-${field}`, name: 'Stolen', scope_kind: 'project', defaults: { [field]: id } },
        expect: [404, code],
      },
      {
        route: 'PATCH /workspaces/:id/agent-types/:agent_type_id',
        field: `defaults.${field}`,
        path: '/workspaces/{b:workspace}/agent-types/{b:agentType}',
        body: { defaults: { [field]: id } },
        expect: [404, code],
      },
      {
        route: 'POST /projects/:id/agent-bindings',
        field,
        path: '/projects/{b:project}/agent-bindings',
        body: { agent_type_id: '{b:agentType}', [field]: id },
        expect: [404, code],
      },
      {
        route: 'PATCH /projects/:id/agent-bindings/:binding_id',
        field,
        path: '/projects/{b:project}/agent-bindings/{b:binding}',
        body: { [field]: id },
        expect: [404, code],
      },
    ];
  }),
  // A run's placement (docs/decisions.md "Agents": a foreign id is 404 session_not_found / floor_not_found).
  {
    route: 'POST /projects/:id/agent-bindings/:binding_id/run',
    field: 'input_json.session_id',
    path: '/projects/{b:project}/agent-bindings/{b:binding}/run',
    body: { input_json: { session_id: '{session}' } },
    expect: [404, 'session_not_found'],
  },
  {
    route: 'POST /projects/:id/agent-bindings/:binding_id/run',
    field: 'input_json.floor_id',
    path: '/projects/{b:project}/agent-bindings/{b:binding}/run',
    body: { input_json: { floor_id: '{floor}' } },
    expect: [404, 'floor_not_found'],
  },
  {
    route: 'POST /projects/:id/agent-bindings/:binding_id/run',
    field: 'input_json.floor_id (with own session_id)',
    path: '/projects/{b:project}/agent-bindings/{b:binding}/run',
    body: { input_json: { session_id: '{b:session}', floor_id: '{floor}' } },
    expect: [404, 'floor_not_found'],
  },

  // ---- Agent Types (defaults) and Agent Bindings (overrides): MCP servers of the Workspace
  // (docs/decisions.md "Agents": 404 mcp_server_not_found, the settings routes' code). After the run
  // cases: "A's ids are real" runs these in order on A's objects, and the last one disables A's binding.
  {
    route: 'POST /workspaces/:id/agent-types',
    field: 'defaults.mcp_bindings[].mcp_server_id',
    path: '/workspaces/{b:workspace}/agent-types',
    body: {
      key: 'stolen-mcp',
      name: 'Stolen',
      scope_kind: 'project',
      defaults: { mcp_bindings: [{ mcp_server_id: '{mcpServer}' }] },
    },
    expect: [404, 'mcp_server_not_found'],
  },
  {
    // For A, this makes A's server one of its type's, so A's binding cases below narrow it.
    route: 'PATCH /workspaces/:id/agent-types/:agent_type_id',
    field: 'defaults.mcp_bindings[].mcp_server_id',
    path: '/workspaces/{b:workspace}/agent-types/{b:agentType}',
    body: { defaults: { mcp_bindings: [{ mcp_server_id: '{mcpServer}' }] } },
    expect: [404, 'mcp_server_not_found'],
  },
  // An enabled binding may only name its type's servers, and B's type can name none of A's (above):
  // the narrowing check answers, alike for A's id and a random one.
  {
    route: 'POST /projects/:id/agent-bindings',
    field: 'mcp_bindings[].mcp_server_id',
    path: '/projects/{b:project}/agent-bindings',
    body: { agent_type_id: '{b:agentType}', mcp_bindings: [{ mcp_server_id: '{mcpServer}' }] },
    expect: [403, 'agent_override_expands_mcp'],
  },
  {
    route: 'PATCH /projects/:id/agent-bindings/:binding_id',
    field: 'mcp_bindings[].mcp_server_id',
    path: '/projects/{b:project}/agent-bindings/{b:binding}',
    body: { mcp_bindings: [{ mcp_server_id: '{mcpServer}' }] },
    expect: [403, 'agent_override_expands_mcp'],
  },
  {
    // A binding written disabled is not held to its type: the reference check itself answers.
    route: 'PATCH /projects/:id/agent-bindings/:binding_id',
    field: 'mcp_bindings[].mcp_server_id (status disabled)',
    path: '/projects/{b:project}/agent-bindings/{b:binding}',
    body: { status: 'disabled', mcp_bindings: [{ mcp_server_id: '{mcpServer}' }] },
    expect: [404, 'mcp_server_not_found'],
  },

  // ---- Derived outputs and inbox entries: their sources, in B's Project.
  ...(['source_session_id', 'source_floor_id', 'source_page_id'] as const).flatMap((field): RefCase[] => {
    const id = { source_session_id: '{session}', source_floor_id: '{floor}', source_page_id: '{page}' }[
      field
    ];
    const code = { source_session_id: 'session', source_floor_id: 'floor', source_page_id: 'page' }[field];
    return [
      {
        route: 'POST /projects/:id/derived-outputs',
        field,
        path: '/projects/{b:project}/derived-outputs',
        body: { domain: 'summary', value: { text: 'x' }, [field]: id },
        expect: [404, `${code}_not_found`],
      },
      {
        route: 'POST /projects/:id/inbox',
        field,
        path: '/projects/{b:project}/inbox',
        body: { kind: 'suggestion', title: 'x', [field]: id },
        expect: [404, `${code}_not_found`],
      },
    ];
  }),
  {
    route: 'POST /projects/:id/derived-outputs',
    field: 'source_floor_id (with own source_session_id)',
    path: '/projects/{b:project}/derived-outputs',
    body: { domain: 'summary', value: {}, source_session_id: '{b:session}', source_floor_id: '{floor}' },
    expect: [404, 'floor_not_found'],
  },
  {
    route: 'POST /projects/:id/inbox',
    field: 'derived_output_id',
    path: '/projects/{b:project}/inbox',
    body: { kind: 'suggestion', title: 'x', derived_output_id: '{derivedOutput}' },
    expect: [404, 'derived_output_not_found'],
  },
  // List filters of B's Project: empty, like a random id.
  {
    route: 'GET /projects/:id/derived-outputs',
    field: 'source_session_id',
    path: '/projects/{b:project}/derived-outputs',
    query: 'source_session_id={session}',
    expect: [200],
  },
  {
    route: 'GET /projects/:id/derived-outputs',
    field: 'owner_account_id',
    path: '/projects/{b:project}/derived-outputs',
    query: 'owner_account_id={account}',
    expect: [200],
  },
  {
    route: 'GET /projects/:id/inbox',
    field: 'source_session_id',
    path: '/projects/{b:project}/inbox',
    query: 'source_session_id={session}',
    expect: [200],
  },
  {
    route: 'GET /projects/:id/inbox',
    field: 'created_by_account_id',
    path: '/projects/{b:project}/inbox',
    query: 'created_by_account_id={account}',
    expect: [200],
  },
  // Event filters: "it must belong to the Project".
  {
    route: 'GET /projects/:id/events',
    field: 'session_id',
    path: '/projects/{b:project}/events',
    query: 'session_id={session}',
    expect: [404, 'session_not_found'],
  },
  {
    route: 'GET /projects/:id/events/stream',
    field: 'session_id',
    path: '/projects/{b:project}/events/stream',
    query: 'session_id={session}',
    expect: [404, 'session_not_found'],
  },

  // ---- Turns, dry-run and prompt reads on B's session: the branch and the floor answered.
  ...(
    [
      ['POST /sessions/:id/respond', '/respond', { message: MESSAGE }],
      ['POST /sessions/:id/respond/stream', '/respond/stream', { message: MESSAGE }],
      ['POST /sessions/:id/respond/dry-run', '/respond/dry-run', { message: MESSAGE }],
      ['POST /sessions/:id/prompt-runtime/inspect', '/prompt-runtime/inspect', {}],
      ['POST /sessions/:id/prompt-runtime/preview', '/prompt-runtime/preview', { text: '{{lastMessage}}' }],
    ] as const
  ).flatMap(([route, suffix, body]): RefCase[] => [
    {
      route,
      field: 'branch_id',
      path: `/sessions/{b:session}${suffix}`,
      body: { ...body, branch_id: '{branch}' },
      expect: [404, 'branch_not_found'],
    },
    {
      route,
      field: 'source_floor_id',
      path: `/sessions/{b:session}${suffix}`,
      body: { ...body, source_floor_id: '{floor}' },
      expect: [404, 'source_floor_not_found'],
    },
  ]),
  {
    route: 'POST /sessions/:id/regenerate',
    field: 'branch_id',
    path: '/sessions/{b:session}/regenerate',
    body: { branch_id: '{branch}' },
    expect: [404, 'branch_not_found'],
  },
  {
    route: 'GET /sessions/:id/floors',
    field: 'branch_id',
    path: '/sessions/{b:session}/floors',
    query: 'branch_id={branch}',
    expect: [404, 'branch_not_found'],
  },

  // ---- Operation logs: scope filters narrow, never widen (spec 3 "Operation logs").
  ...(
    [
      ['workspace_id', 'workspace'],
      ['project_id', 'project'],
      ['actor_account_id', 'account'],
      ['floor_id', 'floor'],
      ['run_id', 'run'],
      ['target_id', 'session'],
    ] as const
  ).map(([field, kind]): RefCase => ({
    route: 'GET /operation-logs',
    field,
    path: '/operation-logs',
    query: `${field}={${kind}}`,
    expect: [200],
    aSees: true,
  })),
  {
    route: 'GET /sessions/:id/operation-logs',
    field: 'floor_id',
    path: '/sessions/{b:session}/operation-logs',
    query: 'floor_id={floor}',
    expect: [200],
  },
  {
    route: 'GET /floors/:id/operation-logs',
    field: 'session_id',
    path: '/floors/{b:floor}/operation-logs',
    query: 'session_id={session}',
    expect: [200],
  },

  // ---- VC tags: the tagged floor or asset version, and the list filter.
  {
    route: 'GET /vc-tags',
    field: 'target_id',
    path: '/vc-tags',
    query: 'target_type=floor&target_id={floor}',
    expect: [200],
    aSees: true,
  },
  {
    route: 'GET /vc-tags',
    field: 'target_id (asset_version)',
    path: '/vc-tags',
    query: 'target_type=asset_version&target_id={presetVersion}',
    expect: [200],
  },
  ...(['presetVersion', 'regexProfileVersion', 'worldbookVersion', 'characterVersion'] as const).map(
    (kind): RefCase => ({
      route: 'POST /vc-tags',
      field: `target_id (asset_version, ${kind})`,
      path: '/vc-tags',
      body: { name: `stolen-${kind}`, target_type: 'asset_version', target_id: `{${kind}}` },
      expect: [404, 'asset_version_not_found'],
    }),
  ),
  {
    route: 'POST /vc-tags',
    field: 'session_id (with own floor)',
    path: '/vc-tags',
    body: { name: 'stolen-floor', target_type: 'floor', target_id: '{b:floor}', session_id: '{session}' },
    // The session given must be the floor's (details name both, the same for a random id).
    expect: [400, 'invalid_tag_session'],
  },

  // ---- Variables: hosts other than the chat (chat is in bola-sweep's EXTRAS).
  ...(
    [
      ['floor', 'scope_id', { scope_id: '{floor}' }],
      ['page', 'scope_id', { scope_id: '{page}' }],
      ['branch', 'scope_id (own session)', { scope_id: '{b:session}:{branch}' }],
      ['branch', 'branch_id (own session_id)', { session_id: '{b:session}', branch_id: '{branch}' }],
      ['branch', 'session_id, branch_id', { session_id: '{session}', branch_id: '{branch}' }],
    ] as const
  ).flatMap(([scope, field, ids]): RefCase[] => [
    {
      route: 'PUT /variables',
      field: `${field} (scope ${scope})`,
      path: '/variables',
      body: { scope, ...ids, key: 'stolen', value: 1 },
      expect: [404, 'variable_host_not_found'],
    },
    {
      route: 'PUT /variables/batch',
      field: `items[].${field} (scope ${scope})`,
      path: '/variables/batch',
      body: { items: [{ scope, ...ids, key: 'stolen', value: 1 }] },
      expect: [404, 'variable_host_not_found'],
    },
    {
      route: 'GET /variables',
      field: `${field} (scope ${scope})`,
      path: '/variables',
      query: `scope=${scope}&${Object.entries(ids)
        .map(([k, v]) => `${k}=${v}`)
        .join('&')}`,
      // A list: empty, as for a host that does not exist.
      expect: [200],
    },
  ]),
  ...(['branch_id', 'floor_id', 'page_id'] as const).map((field): RefCase => ({
    route: 'GET /variables/resolve',
    field: `${field} (own session_id)`,
    path: '/variables/resolve',
    query: `session_id={b:session}&${field}={${field.replace('_id', '')}}`,
    expect: [404, 'variable_host_not_found'],
  })),

  // ---- Model profiles: the session whose bindings are resolved, and a stored profile's key.
  {
    route: 'GET /llm-profiles/runtime',
    field: 'session_id',
    path: '/llm-profiles/runtime',
    query: 'session_id={session}',
    expect: [404, 'session_scope_not_found'],
  },
  {
    route: 'GET /llm-instances/resolved',
    field: 'session_id',
    path: '/llm-instances/resolved',
    query: 'session_id={session}',
    expect: [404, 'session_scope_not_found'],
  },
  {
    route: 'POST /llm-profiles/models/discover',
    field: 'profile_id',
    path: '/llm-profiles/models/discover',
    body: { profile_id: '{llmProfile}' },
    expect: [404, 'profile_not_found'],
  },
  {
    route: 'POST /llm-profiles/models/test',
    field: 'profile_id',
    path: '/llm-profiles/models/test',
    body: { profile_id: '{llmProfile}', model_id: 'fake-model' },
    expect: [404, 'profile_not_found'],
  },

  // ---- Backup: restore from an export job of this account.
  {
    route: 'POST /backup/jobs/restore',
    field: 'export_job_id',
    path: '/backup/jobs/restore',
    body: { export_job_id: '{backupJob}' },
    expect: [404, 'backup_job_not_found'],
  },
];

/**
 * Body and query fields naming objects that bola-sweep.test.ts already sends with A's ids on B's own
 * path objects (its EXTRAS table and nested sweep), so they are not repeated here.
 */
const COVERED_ELSEWHERE = [
  // Path parameters read through a param DTO (`worldbook_id`, `version_id`, `id`): the path sweep.
  'path parameter DTOs: worldbook_id, version_id',
  'POST /sessions: project_id',
  'POST /characters|presets|regex-profiles|worldbooks/:id/rollback: version_id',
  'worldbook entries batch update/delete: ids[]; reorder: items[].id',
  'PUT /projects/:id/settings/llm-profile-override: base_profile_id',
  'PUT /projects/:id/settings/mcp-bindings: mcp_server_id',
  'PUT /projects/:id/settings/tool-policy-overrides: base_policy_id',
  'POST /projects/:id/agent-bindings: agent_type_id',
  'POST /sessions/:id/branches/:branchId/reset: floor_id',
  'POST /sessions/:id/prompt-runtime/compare: base_floor_id, target_floor_id',
  'POST /temporary-conversations/:id/retry|retry-step: floor_id',
  'POST /temporary-conversations/:id/export: target_page_id',
  'POST /llm-profiles/:id/activate: session_id',
  'DELETE /llm-profiles/bindings/:slot: session_id (query)',
  'GET /operation-logs, GET /vc-tags: session_id (query)',
  'POST /vc-tags: target_id (floor)',
  'PUT /variables, PUT /variables/batch, GET /variables: scope_id (chat)',
  'GET /variables/resolve: session_id',
  'POST /users/batch/delete, PATCH /users/batch/status: ids[]',
];

/**
 * Body fields naming principals rather than owned objects, so not swept: accounts and Clients are
 * added to a Project by id whoever owns them (docs/decisions.md "Members": "Clients of any account may
 * be added"; an unknown one is 404 `project_member_account_not_found` / `project_member_client_not_found`).
 * Adding one grants it access to the caller's own Project; it reads nothing of the other account.
 */
const PRINCIPALS_NOT_SWEPT = [
  'POST /projects/:id/members: account_id, subject_id (subject_type account or client)',
  // List filters by account: they narrow a list the caller may already read (swept above anyway).
  'GET /projects/:id/derived-outputs: owner_account_id; GET /projects/:id/inbox: created_by_account_id',
];

/**
 * Fields naming objects that this file does not sweep, and why (docs: /work/notes/bola2.md).
 */
const NOT_SWEPT = [
  // Accepted and ignored by the temporary conversation retry (no tool executions are replayed).
  'POST /temporary-conversations/:id/retry|retry-step: confirmed_execution_ids, confirmed_session_state_mutation_ids',
  // Correlation ids, not objects: they narrow a list already scoped to the caller.
  'GET /operation-logs: operation_group_id, request_id',
  // Ids inside an uploaded file: the nchat file's character_binding is covered by chat-import.test.ts
  // ("Bob ... gets an unbound session"); a backup document is restored by the worker into new objects.
  'POST /import/chat: data.character_binding; POST /backup/jobs/restore: document',
  // Not an object: a provider's model name (llm profiles, models/test).
  'model_id',
];

/** Every `*_id`, `*_ids` or `ids` field declared by a request DTO of the API (the names only). */
function dtoIdFields(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.dto.ts'))
        for (const m of readFileSync(path, 'utf8').matchAll(
          /^\s+(?:@[\w.]+\([^)]*\)\s*)*([a-z_]+_ids?|ids)[?!]:/gm,
        ))
          names.add(m[1]);
    }
  };
  walk(join(__dirname, '../../apps/api/src'));
  return [...names].sort();
}

/**
 * The cases whose answer to A itself (on its own objects, with its own ids) is not a success, with the
 * status and why; `null`: not called.
 */
const A_NOT_2XX: Record<string, number | null> = {
  // With A's own worldbook as "the own one", the list names one worldbook twice (400).
  'POST /sessions worldbook_ids (after an own one)': null,
  'PATCH /sessions/:id worldbook_ids (after an own one)': null,
  // The Project's live event stream never ends.
  'GET /projects/:id/events/stream session_id': null,
  // A's session is bound to A's model profile, whose base URL is no model server: the turn got past
  // every check and failed at the model call (502 generation_upstream_unreachable).
  'POST /sessions/:id/respond branch_id': 502,
  'POST /sessions/:id/respond source_floor_id': 502,
  'POST /sessions/:id/regenerate branch_id': 502,
  // The same for the stored profile's key: discovery and the test call reach the network (502).
  'POST /llm-profiles/models/discover profile_id': 502,
  'POST /llm-profiles/models/test profile_id': 502,
  // A committed floor's (and its pages') variables are read-only: 409 variable_target_locked.
  'PUT /variables scope_id (scope floor)': 409,
  'PUT /variables/batch items[].scope_id (scope floor)': 409,
  'PUT /variables scope_id (scope page)': 409,
  'PUT /variables/batch items[].scope_id (scope page)': 409,
  // No worker runs here: A's export job has no file yet (404 artifact_not_found, a code B never gets).
  'POST /backup/jobs/restore export_job_id': 404,
};

interface Call {
  status: number;
  body: unknown;
  text: string;
}

const methodOf = (c: RefCase) =>
  c.route.split(' ')[0].toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
const nameOf = (c: RefCase) => `${c.route} ${c.field}`;
/** The kinds of A's objects a case names (`{kind}`, not `{b:kind}`). */
const kindsOf = (c: RefCase) =>
  [...JSON.stringify([c.path, c.query ?? '', c.body ?? null]).matchAll(/(?<!\{)\{(\w+)\}(?!\})/g)].map(
    (m) => m[1],
  );

describe('R8: ids in bodies and queries name only the caller’s own objects', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;
  /** A's object of each kind. */
  let a: Record<Kind, string>;
  /** B's own objects, as `b:kind`. */
  const own: Record<string, string> = {};
  let checksums: () => Promise<Record<string, string>>;

  /** Calls the case (as B unless told) with `ids` (kind → id) for `{kind}` and B's objects for `{b:kind}`. */
  async function call(
    c: RefCase,
    ids: Record<string, string>,
    apiKey = bob.apiKey,
    parents: Record<string, string> = own,
  ): Promise<Call> {
    const all = { ...ids, ...parents };
    let url = fill(c.path, all) as string;
    if (c.query) url += `?${fill(c.query, all) as string}`;
    const req = t.http[methodOf(c)](url).set('x-api-key', apiKey).timeout(10_000);
    try {
      const res = await (c.body === undefined ? req : req.send(fill(c.body, all) as object));
      return { status: res.status, body: res.body, text: res.text ?? '' };
    } catch (error) {
      // An answer that never ends (an event stream that opened) is reported, not thrown.
      return { status: 0, body: null, text: String(error) };
    }
  }

  /** The answer with every id of `ids` replaced by its kind, for comparing two answers. */
  const normalised = (c: Call, ids: Record<string, string>) => {
    let text = JSON.stringify({ status: c.status, body: c.body });
    for (const [kind, id] of Object.entries(ids)) text = text.split(id).join(`<${kind}>`);
    return text.replace(/"(request_id|error_id)":"[^"]*"/g, '"$1":"<x>"');
  };

  const randomIds = () =>
    Object.fromEntries((Object.keys(a) as Kind[]).map((k) => [k, randomLike(a[k])])) as Record<Kind, string>;

  const codeOf = (c: Call) => (c.body as { error?: { code?: string } } | null)?.error?.code;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, {
      env: { APP_SECRETS_MASTER_KEY: newMasterKey(), ENABLE_CLIENT_DATA: 'true' },
    });
    const world = await seedBolaWorld(t);
    ({ alice, bob, a } = world);
    for (const [kind, id] of Object.entries(world.b)) own[`b:${kind}`] = id;

    // B's own session in B's own Project, with one committed turn (its branch, floor and page), and an
    // Agent Type and an enabled binding of it.
    const bobs = (method: 'post', path: string, body: object) =>
      t.http[method](path)
        .set('x-api-key', bob.apiKey)
        .send(body)
        .then((res) => {
          if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
          return res.body as Record<string, any>;
        });
    own['b:session'] = (await createSessionInProject(t, own['b:project'], { apiKey: bob.apiKey })).id;
    const turn = (await bobs('post', `/sessions/${own['b:session']}/respond`, { message: 'mine' })).data;
    own['b:branch'] = turn.branch_id;
    own['b:floor'] = turn.floor_id;
    own['b:page'] = turn.page_id;
    own['b:agentType'] = (await createAgentType(t, bob.apiKey, own['b:workspace'])).id;
    own['b:binding'] = (
      await createBinding(t, bob.apiKey, own['b:project'], { agent_type_id: own['b:agentType'] })
    ).id;
    checksums = await tableChecksums(t);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  it('names every id field of the request DTOs: swept here, in bola-sweep.test.ts, or listed as not swept', () => {
    const fields = dtoIdFields();
    expect(fields).toEqual(expect.arrayContaining(['character_id', 'source_floor_id', 'worldbook_ids']));
    const listed = JSON.stringify([CASES, COVERED_ELSEWHERE, PRINCIPALS_NOT_SWEPT, NOT_SWEPT]);
    expect(fields.filter((f) => !new RegExp(`\\b${f}\\b`).test(listed))).toEqual([]);
  });

  it('lists each case once, and every case names one of A’s objects', () => {
    const names = CASES.map(nameOf);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(CASES.filter((c) => kindsOf(c).length === 0).map(nameOf)).toEqual([]);
    expect(CASES.flatMap(kindsOf).filter((k) => !a[k as Kind])).toEqual([]);
  });

  it("answers B's use of A's ids exactly like random ids: the kind's answer, no data, nothing changed", async () => {
    const failures: string[] = [];
    for (const c of CASES) {
      const name = nameOf(c);
      const random = randomIds();
      const before = await checksums();
      const got = await call(c, a);
      const baseline = await call(c, random);
      const [status, code] = c.expect;
      if (baseline.status !== status || (code !== undefined && codeOf(baseline) !== code))
        failures.push(
          `${name}: a random id got ${baseline.status} ${baseline.text.slice(0, 300)} (expected ${status} ${code ?? ''})`,
        );
      if (normalised(got, a) !== normalised(baseline, random))
        failures.push(
          `${name}: A's ids got ${normalised(got, a)} but random ids ${normalised(baseline, random)}`,
        );
      if (got.text.includes(BOLA_MARK))
        failures.push(`${name}: the answer holds A's data: ${got.text.slice(0, 300)}`);
      const after = await checksums();
      const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
      if (changed.length) failures.push(`${name}: rows changed in ${changed.join(', ')}`);
      if (c.aSees) {
        const mine = await call(c, a, alice.apiKey);
        if (mine.status !== 200 || normalised(mine, a) === normalised(got, a))
          failures.push(
            `${name}: A's own answer (${mine.status}) does not show A's rows: the filter test is blind`,
          );
      }
    }
    expect(failures).toEqual([]);

    // B's session is bound to none of A's objects, and its prompt reads none of A's text.
    const session = await t.http.get(`/sessions/${own['b:session']}`).set('x-api-key', bob.apiKey);
    const dryRun = await t.http
      .post(`/sessions/${own['b:session']}/respond/dry-run`)
      .set('x-api-key', bob.apiKey)
      .send({ message: MESSAGE });
    expect([session.status, dryRun.status]).toEqual([200, 200]);
    for (const text of [session.text, dryRun.text]) {
      expect(text).not.toContain(BOLA_MARK);
      expect(Object.values(a).filter((id) => text.includes(id))).toEqual([]);
    }
  });

  it("A's ids are real: A names them on its own objects and is answered (so B's answers are the ownership check)", async () => {
    // Runs last: it changes A's objects. `{b:kind}` becomes A's object of that kind.
    const parents = Object.fromEntries(Object.keys(own).map((k) => [k, a[k.slice(2) as Kind]]));
    const failures: string[] = [];
    for (const c of CASES) {
      const expected = A_NOT_2XX[nameOf(c)];
      if (expected === null) continue;
      const res = await call(c, a, alice.apiKey, parents);
      const ok = expected === undefined ? res.status >= 200 && res.status < 300 : res.status === expected;
      if (!ok) failures.push(`${nameOf(c)}: A got ${res.status} ${res.text.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
  });
});
