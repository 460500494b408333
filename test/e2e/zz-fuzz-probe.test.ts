import { writeFileSync } from 'node:fs';
import { newMasterKey } from '../support/factories/llm-profiles';
import { createAccountCaller } from '../support/factories/members';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { seedBolaWorld, type BolaWorld } from './bola-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';
// ---- route spec extraction from Nest + class-validator metadata ----
// ---- route spec extraction from Nest + class-validator metadata ----
import { ModulesContainer } from '@nestjs/core';
import { getMetadataStorage } from 'class-validator';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: unknown };

interface FieldInfo {
  name: string;
  validators: string[];
  each: boolean;
  nested?: FieldInfo[];
}
interface RouteSpec {
  method: string;
  path: string;
  handler: string;
  body?: FieldInfo[];
  bodyKeys: string[];
  query?: FieldInfo[];
  queryKeys: string[];
}

function fieldsOf(cls: unknown, depth = 0): FieldInfo[] | undefined {
  if (typeof cls !== 'function' || [Object, String, Number, Boolean, Array].includes(cls as never)) return undefined;
  const storage = getMetadataStorage();
  const metas = storage.getTargetValidationMetadatas(cls as never, '', false, false);
  if (!metas.length) return undefined;
  const byProp = new Map<string, FieldInfo>();
  for (const m of metas) {
    const f = byProp.get(m.propertyName) ?? { name: m.propertyName, validators: [], each: false };
    byProp.set(m.propertyName, f);
    const cname = m.constraintCls ? storage.getTargetValidatorConstraints(m.constraintCls)[0]?.name : undefined;
    f.validators.push(cname ?? m.name ?? m.type);
    if (m.each) f.each = true;
  }
  if (depth < 4)
    for (const f of byProp.values()) {
      const tm = (defaultMetadataStorage as any).findTypeMetadata(cls, f.name);
      if (tm?.typeFunction) {
        try {
          const t = tm.typeFunction();
          const nested = fieldsOf(t, depth + 1);
          if (nested) f.nested = nested;
        } catch {
          /* discriminator etc */
        }
      }
    }
  return [...byProp.values()];
}

function joinPath(...parts: string[]): string {
  return ('/' + parts.filter(Boolean).join('/')).replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
}

function routeSpecs(t: TestApp): RouteSpec[] {
  const specs: RouteSpec[] = [];
  const modules = t.app.get(ModulesContainer);
  const methodNames = ['get', 'post', 'put', 'delete', 'patch', 'all', 'options', 'head'];
  for (const mod of modules.values()) {
    for (const wrapper of mod.controllers.values()) {
      const ctrl = wrapper.metatype as any;
      if (!ctrl) continue;
      const ctrlPaths = ([] as string[]).concat(Reflect.getMetadata('path', ctrl) ?? '');
      const proto = ctrl.prototype;
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === 'constructor') continue;
        const fn = proto[name];
        if (typeof fn !== 'function') continue;
        const mpath = Reflect.getMetadata('path', fn);
        const rm = Reflect.getMetadata('method', fn);
        if (mpath === undefined || rm === undefined) continue;
        const args = (Reflect.getMetadata('__routeArguments__', ctrl, name) ?? {}) as Record<
          string,
          { index: number; data?: string }
        >;
        const types = (Reflect.getMetadata('design:paramtypes', proto, name) ?? []) as unknown[];
        const spec = { bodyKeys: [] as string[], queryKeys: [] as string[] } as Omit<RouteSpec, 'method' | 'path' | 'handler'>;
        for (const [key, arg] of Object.entries(args)) {
          const kind = Number(key.split(':')[0]);
          if (kind === 3) {
            if (arg.data) spec.bodyKeys.push(arg.data);
            else spec.body = fieldsOf(types[arg.index]) ?? spec.body ?? [];
          } else if (kind === 4) {
            if (arg.data) spec.queryKeys.push(arg.data);
            else spec.query = fieldsOf(types[arg.index]) ?? spec.query ?? [];
          }
        }
        for (const cp of ctrlPaths)
          for (const mp of ([] as string[]).concat(mpath))
            specs.push({
              method: methodNames[rm as number],
              path: joinPath(cp, mp),
              handler: `${ctrl.name}.${name}`,
              ...spec,
            });
      }
    }
  }
  return specs;
}

// ---------------------------------------------------------------- the probe
jest.setTimeout(900_000);

const OUT = '/tmp/fuzz';
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 8 * 60_000);
const REQ_TIMEOUT_MS = 10_000;
const STREAM_READ_MS = 2_000;

const INJECTION = { source_kind: 'client_injection', title: 'T', content: 'C', placement: 'after_history' };
const REGEX_DATA = [{ scriptName: 's', findRegex: 'a', replaceString: 'b', placement: [2] }];
const CHAT_JSONL = [
  { user_name: 'U', character_name: 'C', chat_metadata: {} },
  { name: 'User', is_user: true, is_system: false, send_date: 1_700_000_000_000, mes: 'hi', extra: {} },
  { name: 'Bot', is_user: false, send_date: 1_700_000_000_500, mes: 'hello', extra: {} },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

/** Baseline bodies/queries (valid enough to get past validation), `{kind}` filled with the caller's ids. */
const BASE: Record<string, { body?: unknown; query?: Record<string, string> }> = {
  'POST /projects/:id/members': { body: { role: 'observer', account_id: '{newMember}' } },
  'POST /projects/:id/derived-outputs': { body: { domain: 'summary', value: { text: 'x' } } },
  'PATCH /projects/:id/derived-outputs/:item_id': { body: { status: 'archived' } },
  'POST /projects/:id/inbox': { body: { kind: 'suggestion', title: 'x' } },
  'POST /projects/:id/inbox/:entry_id/accept': { body: { reason: 'x' } },
  'POST /projects/:id/inbox/:entry_id/reject': { body: { reason: 'x' } },
  'POST /projects/:id/node-graphs': {
    body: { name: 'G', graph: { nodes: [{ id: 'n0', type: 'step' }], edges: [] } },
  },
  'PATCH /projects/:id/node-graphs/:graph_id': {
    body: { expected_version: '{ngVersion}', name: 'G2', graph: { nodes: [{ id: 'n0', type: 'step' }], edges: [] } },
  },
  'PUT /projects/:id/settings/llm-profile-override': { body: { base_profile_id: '{llmProfile}', override_json: {} } },
  'PUT /projects/:id/settings/mcp-bindings': { body: { mcp_server_id: '{mcpServer}' } },
  'PUT /projects/:id/settings/tool-policy-overrides': { body: { base_policy_id: '{toolPolicy}', override_json: {} } },
  'POST /mcp-servers': { body: { name: 'fzmcp{uniq}', url: 'http://127.0.0.1:9/mcp', tools: ['t'] } },
  'PATCH /mcp-servers/:id': { body: { name: 'fzmcp2{uniq}' } },
  'POST /tool-policies': { body: { name: 'fzpol{uniq}', policy_json: { mode: 'deny', tools: [] } } },
  'PATCH /tool-policies/:id': { body: { name: 'fzpol2{uniq}', policy_json: { mode: 'deny', tools: [] } } },
  'POST /sessions': { body: { project_id: '{project}', title: 'S', character_id: '{character}' } },
  'PATCH /sessions/:id': { body: { title: 'S2' } },
  'POST /accounts': { body: { name: 'fzacct{uniq}' } },
  'PATCH /accounts/:id': { body: { name: 'fzacct2{uniq}' } },
  'POST /clients': { body: { name: 'fzclient{uniq}' } },
  'PATCH /clients/:id': { body: { name: 'fzclient2{uniq}' } },
  'GET /operation-logs': { query: { session_id: '{session}' } },
  'PUT /presets/:id': { body: { name: 'P', data: { prompts: [] } } },
  'POST /presets/:id/rollback': { body: { version_id: '{presetVersion}' } },
  'POST /import/preset': { body: { name: 'P', data: { prompts: [] } } },
  'PUT /regex-profiles/:id': { body: { name: 'R', data: REGEX_DATA } },
  'POST /regex-profiles/:id/rollback': { body: { version_id: '{regexProfileVersion}' } },
  'POST /import/regex': { body: { name: 'R', data: REGEX_DATA } },
  'PATCH /users/batch/status': { body: { ids: ['{userCard}'], status: 'disabled' } },
  'POST /users/batch/delete': { body: { ids: ['{userCard}'] } },
  'POST /users': { body: { snapshot: { name: 'U' } } },
  'PATCH /users/:id': { body: { snapshot: { name: 'U2' } } },
  'POST /vc-tags': { body: { name: 'fztag{uniq}', target_type: 'floor', target_id: '{floor}' } },
  'GET /vc-tags': { query: { session_id: '{session}' } },
  'PATCH /characters/:id': { body: { data: { name: 'C2' } } },
  'POST /characters/:id/rollback': { body: { version_id: '{characterVersion}' } },
  'POST /import/character': {
    body: {
      payload: {
        spec: 'chara_card_v2',
        spec_version: '2.0',
        data: { name: 'Fz', description: '', personality: '', scenario: '', first_mes: 'hi', mes_example: '' },
      },
    },
  },
  'PUT /worldbooks/:id': { body: { name: 'W', data: { entries: {} }, expected_version: '{wbVersion}' } },
  'POST /worldbooks/:id/rollback': { body: { version_id: '{worldbookVersion}' } },
  'POST /worldbooks/:worldbook_id/entries': { body: { keys: ['k'], content: 'x' } },
  'PATCH /worldbooks/:worldbook_id/entries/:id': { body: { content: 'x' } },
  'PATCH /worldbooks/:worldbook_id/entries/batch/update': {
    body: { ids: ['{worldbookEntry}'], fields: { content: 'x' } },
  },
  'POST /worldbooks/:worldbook_id/entries/batch/delete': { body: { ids: ['{worldbookEntry}'] } },
  'PUT /worldbooks/:worldbook_id/entries/batch/reorder': { body: { items: [{ id: '{worldbookEntry}', order: 1 }] } },
  'POST /import/worldbook': { body: { name: 'W', data: { entries: {} } } },
  'POST /sessions/:id/branches/:branchId/reset': { body: { floor_id: '{floor}' } },
  'POST /floors/:id/branch': { body: { name: 'b' } },
  'PATCH /sessions/:id/prompt-runtime/policy': { body: { structure: { mode: 'flattened' } } },
  'PATCH /sessions/:id/prompt-runtime/branches/:branchId/policy': { body: { structure: { mode: 'flattened' } } },
  'POST /sessions/:id/prompt-runtime/injections': { body: INJECTION },
  'PATCH /sessions/:id/prompt-runtime/injections/:injectionId': { body: { title: 'T2' } },
  'POST /sessions/:id/prompt-runtime/branches/:branchId/injections': { body: INJECTION },
  'PATCH /sessions/:id/prompt-runtime/branches/:branchId/injections/:injectionId': { body: { title: 'T2' } },
  'POST /llm-profiles': {
    body: { preset_name: 'FzP{uniq}', provider: 'openai', model_id: 'm', api_key: 'sk-fuzz-0123456789abcdef' },
  },
  'POST /llm-profiles/models/discover': { body: { profile_id: '{llmProfile}' } },
  'POST /llm-profiles/models/test': { body: { profile_id: '{llmProfile}', model_id: 'fake-model' } },
  'DELETE /llm-profiles/bindings/:slot': { query: { scope: 'session', session_id: '{session}' } },
  'PATCH /llm-profiles/:id': { body: { preset_name: 'FzP2{uniq}' } },
  'POST /llm-profiles/:id/activate': { body: { scope: 'session', session_id: '{session}', instance_slot: 'narrator' } },
  'GET /llm-profiles/runtime': { query: { session_id: '{session}' } },
  'GET /llm-instances/resolved': { query: { session_id: '{session}' } },
  'PUT /variables': { body: { scope: 'chat', scope_id: '{session}', key: 'k', value: 1 } },
  'PUT /variables/batch': { body: { items: [{ scope: 'chat', scope_id: '{session}', key: 'k', value: 1 }] } },
  'GET /variables': { query: { scope: 'chat', scope_id: '{session}' } },
  'GET /variables/resolve': { query: { session_id: '{session}', page_id: '{page}' } },
  'POST /sessions/:id/respond/dry-run': { body: { message: 'x' } },
  'POST /sessions/:id/prompt-runtime/compare': { body: { base_floor_id: '{floor}', target_floor_id: '{floor}' } },
  'POST /sessions/:id/prompt-runtime/preview': { body: { text: 'x' } },
  'POST /sessions/:id/prompt-runtime/inspect': { body: { message: 'x' } },
  'POST /sessions/:id/respond': { body: { message: 'x' } },
  'POST /sessions/:id/respond/stream': { body: { message: 'x' } },
  'POST /floors/:id/retry-step': { body: { from_step_index: 1 } },
  'POST /messages/:id/edit-and-regenerate': { body: { content: 'x' } },
  'POST /import/chat': { body: { data: CHAT_JSONL } },
  'POST /import/chat/jobs': { body: { data: CHAT_JSONL } },
  'POST /backup/jobs/restore': { body: { export_job_id: '{backupJob}' } },
  'PUT /sessions/:id/prompt-runtime/mode': { body: { prompt_mode: 'native' } },
  'POST /temporary-conversations/:id/messages': { body: { role: 'user', content: 'x' } },
  'POST /temporary-conversations/:id/respond': { body: { input_message: { role: 'user', content: 'x' } } },
  'POST /temporary-conversations/:id/retry': { body: { floor_id: '{tempFloor}' } },
  'POST /temporary-conversations/:id/retry-step': { body: { floor_id: '{tempFloor}', from_step_index: 1 } },
  'POST /temporary-conversations/:id/export': {
    body: { target: 'page_staged_write', target_page_id: '{page}', reason: 'x' },
  },
  'POST /workspaces/:id/agent-types': { body: { key: 'fzkey{uniq}', name: 'T', scope_kind: 'project', defaults: {} } },
  'PATCH /workspaces/:id/agent-types/:agent_type_id': { body: { name: 'T2' } },
  'POST /projects/:id/agent-bindings': { body: { agent_type_id: '{agentType}' } },
  'PATCH /projects/:id/agent-bindings/:binding_id': { body: { metadata: { a: 1 } } },
  'POST /projects/:id/agent-bindings/:binding_id/run': { body: { input_json: {} } },
  'POST /client-data/namespaces': { body: { name: 'fzns{uniq}' } },
  'PATCH /client-data/namespaces/:name': { body: { description: 'd' } },
  'GET /sessions/:id/state': { query: {} },
  'GET /projects/:id/events/stream': { query: {} },
};

const PARAM_KIND: Record<string, string> = {
  'accounts:id': 'account', 'backup/jobs:id': 'backupJob', 'characters:id': 'character',
  'characters/versions:version_id': 'characterVersion', 'chat-transfer-jobs:id': 'chatTransferJob',
  'clients:id': 'client', 'client-data/namespaces:name': 'clientDataNamespace', 'export/character:id': 'character',
  'export/chat:id': 'session', 'export/preset:id': 'preset', 'export/regex:id': 'regexProfile',
  'export/worldbook:id': 'worldbook', 'floors:id': 'floor', 'llm-profiles:id': 'llmProfile',
  'mcp-servers:id': 'mcpServer', 'messages:id': 'message', 'pages:id': 'page', 'pages:pageId': 'page',
  'presets:id': 'preset', 'presets/versions:version_id': 'presetVersion', 'projects:id': 'project',
  'projects/agent-bindings:binding_id': 'binding', 'projects/agent-jobs:job_id': 'agentJob',
  'projects/derived-outputs:item_id': 'derivedOutput', 'projects/inbox:entry_id': 'inboxEntry',
  'projects/members:account_id': 'memberAccount', 'projects/members:subject_id': 'memberAccount',
  'projects/node-graphs:graph_id': 'nodeGraph', 'regex-profiles:id': 'regexProfile',
  'regex-profiles/versions:version_id': 'regexProfileVersion', 'runs:id': 'run', 'sessions:id': 'session',
  'sessions/branches:branchId': 'branch', 'sessions/prompt-runtime/branches:branchId': 'branch',
  'sessions/prompt-runtime/branches/injections:injectionId': 'branchInjection',
  'sessions/prompt-runtime/injections:injectionId': 'injection', 'temporary-conversations:id': 'temporaryConversation',
  'tool-policies:id': 'toolPolicy', 'users:id': 'userCard', 'variables:id': 'variable', 'vc-tags:id': 'vcTag',
  'workspaces:id': 'workspace', 'workspaces/agent-types:agent_type_id': 'agentType', 'worldbooks:id': 'worldbook',
  'worldbooks/versions:version_id': 'worldbookVersion', 'worldbooks:worldbook_id': 'worldbook',
  'worldbooks/entries:id': 'worldbookEntry',
};
const PARAM_LITERAL: Record<string, string> = {
  'projects/members:subject_type': 'account',
  'llm-profiles/bindings:slot': 'narrator',
};

function paramsOf(path: string): Array<{ name: string; key: string }> {
  const literals: string[] = [];
  const params: Array<{ name: string; key: string }> = [];
  for (const segment of path.split('/').filter(Boolean)) {
    if (segment.startsWith(':')) params.push({ name: segment.slice(1), key: `${literals.join('/')}:${segment.slice(1)}` });
    else literals.push(segment);
  }
  return params;
}

let uniq = 0;
function fill(value: unknown, ids: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{uniq\}/g, () => String(++uniq)).replace(/\{([\w:]+)\}/g, (_, k: string) => ids[k] ?? `{${k}}`);
  if (Array.isArray(value)) return value.map((v) => fill(v, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ids)]));
  return value;
}

const deepObj = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const deepArr = (n: number) => '['.repeat(n) + ']'.repeat(n);
const arrOf = (n: number, item: string) => '[' + Array(n).fill(item).join(',') + ']';

/** Raw JSON texts put in a field. Full set for DTO fields; short set for deeper paths of the baseline. */
const FULL_VALUES: Array<[string, string]> = [
  ['int 2^31', '2147483648'],
  ['int -2^31-1', '-2147483649'],
  ['int 2^53+1', '9007199254740993'],
  ['1e20', '1e20'],
  ['-1', '-1'],
  ['0', '0'],
  ['float 1.5', '1.5'],
  ['1e400', '1e400'],
  ['-1e400', '-1e400'],
  ['empty string', '""'],
  ['string with NUL', '"a\\u0000b"'],
  ['lone surrogate', '"\\ud800"'],
  ['lone low surrogate', '"x\\udfffy"'],
  ['deep object 200', deepObj(200)],
  ['deep array 200', deepArr(200)],
  ['array 10000 strings', arrOf(10000, '"x"')],
  ['array 10000 ints', arrOf(10000, '1')],
  ['array 10000 objects', arrOf(10000, '{}')],
  ['{}', '{}'],
  ['[]', '[]'],
  ['"x"', '"x"'],
  ['123', '123'],
  ['true', 'true'],
  ['null', 'null'],
  ['{"a":1}', '{"a":1}'],
  ['["x"]', '["x"]'],
  ['[null]', '[null]'],
  ['[{}]', '[{}]'],
  ['string 100000', '"' + 'a'.repeat(100000) + '"'],
  ['"2147483648"', '"2147483648"'],
  ['"-1"', '"-1"'],
  ['"NaN"', '"NaN"'],
  ['__proto__ object', '{"__proto__":{"polluted":1}}'],
];
const SHORT_VALUES = FULL_VALUES.filter(([n]) =>
  ['int 2^31', 'int 2^53+1', '-1', 'float 1.5', '1e400', 'empty string', 'string with NUL', 'lone surrogate',
    'deep object 200', 'array 10000 strings', 'array 10000 objects', '{}', '[]', '"x"', '123', 'null', 'string 100000',
    '[null]'].includes(n),
);
const WHOLE_BODIES: Array<[string, string]> = [
  ['{}', '{}'], ['[]', '[]'], ['null', 'null'], ['"x"', '"x"'], ['123', '123'], ['true', 'true'],
  ['deep 250', deepObj(250)], ['array 10000', arrOf(10000, '{}')],
];
const QUERY_VALUES: Array<[string, string]> = [
  ['1e20 digits', '100000000000000000000'], ['-1', '-1'], ['1e400', '1e400'], ['NaN', 'NaN'], ['Infinity', 'Infinity'],
  ['%00', '%00'], ['a*100000', 'a'.repeat(100000)], ['a*6000', 'a'.repeat(6000)], ['[]', '[]'], ['{}', '{}'],
  ['empty', ''], ['1.5', '1.5'], ['2147483648', '2147483648'], ['9007199254740993', '9007199254740993'],
  ['%ff', '%ff'], ['%ED%A0%80', '%ED%A0%80'], ['true', 'true'], ['0x10', '0x10'], ['+1 (space)', '%201'],
  ['-0', '-0'], ['1e3', '1e3'], ['x%00y', 'x%00y'], ['unicode', encodeURIComponent('ü日本🙂')],
];
const PATH_VALUES: Array<[string, (id: string) => string]> = [
  ['x*10000', () => 'x'.repeat(10000)],
  ['id+x*10000', (id) => id + 'x'.repeat(10000)],
  ['%00', () => '%00'],
  ['id%00', (id) => id + '%00'],
  ['..%2F', () => '..%2F..%2F'],
  ['%2E%2E', () => '%2E%2E'],
  ['unicode', () => encodeURIComponent('ü日本🙂')],
  ['%ff', () => '%ff'],
  ['%ED%A0%80 (surrogate bytes)', () => '%ED%A0%80'],
  ['bad escape %E0%A4%A', () => '%E0%A4%A'],
  ['space', () => '%20'],
  ['id upper', (id) => id.toUpperCase()],
];

const MARK = '"__FUZZ_SLOT__"';

/** Clone of `base` with `path` set to the marker (containers created as needed). */
function withSlot(base: unknown, path: Array<string | number>): unknown {
  const root = JSON.parse(JSON.stringify(base ?? {}));
  if (path.length === 0) return JSON.parse(MARK);
  let cur: any = root;
  if (typeof cur !== 'object' || cur === null) return null;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const nextIsIndex = typeof path[i + 1] === 'number';
    if (cur[key] === null || typeof cur[key] !== 'object' || Array.isArray(cur[key]) !== nextIsIndex)
      cur[key] = nextIsIndex ? [{}] : {};
    cur = cur[key];
    if (nextIsIndex && (cur[path[i + 1] as number] === undefined || typeof cur[path[i + 1] as number] !== 'object'))
      cur[path[i + 1] as number] = {};
  }
  cur[path[path.length - 1]] = JSON.parse(MARK);
  return root;
}

/** Paths of every DTO field (nested ones inside arrays at index 0). */
function dtoPaths(fields: FieldInfo[] | undefined, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (!fields) return [];
  const out: Array<Array<string | number>> = [];
  for (const f of fields) {
    const p = [...prefix, f.name];
    out.push(p);
    if (f.nested) out.push(...dtoPaths(f.nested, f.each ? [...p, 0] : p));
  }
  return out;
}

/** Paths inside the baseline body (below its top level), to depth 4. */
function basePaths(value: unknown, prefix: Array<string | number> = [], depth = 0): Array<Array<string | number>> {
  if (depth >= 4 || value === null || typeof value !== 'object') return [];
  const out: Array<Array<string | number>> = [];
  const entries = Array.isArray(value) ? value.slice(0, 1).map((v, i) => [i, v] as const) : Object.entries(value);
  for (const [k, v] of entries) {
    const p = [...prefix, k];
    out.push(p);
    out.push(...basePaths(v, p, depth + 1));
  }
  return out;
}

const DESTRUCTIVE = /(^delete )|\/(batch\/delete|discard|finalize|cancel|archive|disable|accept|reject|reset|api-keys)$/;

interface Finding {
  phase: string;
  route: string;
  label: string;
  method: string;
  url: string;
  body?: string;
  status: number;
  code?: string;
  error_id?: string;
  response: string;
  logs: Array<Record<string, unknown>>;
}

describe('fuzz probe: 500s from client input', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let world: BolaWorld & { victim: string; tempFloor?: string };
  const findings: Finding[] = [];
  const errorLogs: Array<Record<string, unknown>> = [];
  const stats: Record<string, Record<string, number>> = {};
  let requests = 0;
  let reseeds = 0;
  let started = 0;
  const skipped: string[] = [];

  async function seed() {
    const w = await seedBolaWorld(t);
    const victim = await createAccountCaller(t, { name: 'Victim' });
    world = { ...w, victim: victim.accountId };
    // The seeded profile (no base_url) is bound to the session's narrator slot: unbind it so turns use
    // the env model (the fake server) and get past the provider call.
    const res = await t.http
      .delete(`/llm-profiles/bindings/narrator?scope=session&session_id=${w.a.session}`)
      .set('x-api-key', w.alice.apiKey);
    if (res.status !== 200) throw new Error(`unbind ${res.status} ${res.text}`);
    const temp = await t.http
      .post(`/temporary-conversations/${w.a.temporaryConversation}/respond`)
      .set('x-api-key', w.alice.apiKey)
      .send({ input_message: { role: 'user', content: 'hi' } });
    if (temp.status !== 200) throw new Error(`temp respond ${temp.status} ${temp.text}`);
    world.tempFloor = temp.body.data.floor_id;
  }

  const ids = () => ({ ...world.a, account: world.victim, tempFloor: world.tempFloor }) as Record<string, string>;
  const keyFor = (path: string) => (path.startsWith('/accounts') ? ADMIN_KEY : world.alice.apiKey);

  function urlFor(route: RouteSpec, override?: { index: number; value: (id: string) => string }): string {
    const idMap = ids();
    let i = 0;
    return route.path.replace(/:(\w+)/g, (_, name: string) => {
      const p = paramsOf(route.path).find((x) => x.name === name)!;
      const real = PARAM_LITERAL[p.key] ?? idMap[PARAM_KIND[p.key]] ?? 'unknown';
      const idx = i++;
      if (override && override.index === idx) return override.value(real);
      return encodeURIComponent(real);
    });
  }

  function queryString(q: Record<string, string> | undefined): string {
    if (!q) return '';
    const filled = fill(q, ids()) as Record<string, string>;
    const s = Object.entries(filled).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return s ? `?${s}` : '';
  }

  const baselines: Record<string, { status: number; text: string }> = {};
  let lastText = '';

  async function send(
    phase: string,
    route: RouteSpec,
    label: string,
    url: string,
    bodyText: string | undefined,
  ): Promise<number> {
    if (Date.now() - started > BUDGET_MS) throw new Error('budget');
    if (bodyText?.includes('"{wbVersion}"')) {
      const res = await t.http.get(`/worldbooks/${world.a.worldbook}`).set('x-api-key', world.alice.apiKey);
      bodyText = bodyText.split('"{wbVersion}"').join(String(res.body?.data?.version ?? 1));
    }
    if (bodyText?.includes('"{ngVersion}"')) {
      const res = await t.http
        .get(`/projects/${world.a.project}/node-graphs/${world.a.nodeGraph}`)
        .set('x-api-key', world.alice.apiKey);
      bodyText = bodyText.split('"{ngVersion}"').join(String(res.body?.item?.version ?? res.body?.data?.version ?? 1));
    }
    if (bodyText?.includes('{newMember}')) {
      const m = await createAccountCaller(t, { name: 'Member' });
      bodyText = bodyText.split('{newMember}').join(m.accountId);
    }
    requests++;
    const logStart = t.logs.length;
    const method = route.method.toUpperCase();
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), REQ_TIMEOUT_MS);
    let status = 0;
    let text = '';
    try {
      const res = await fetch(t.baseUrl + url, {
        method,
        headers: {
          'x-api-key': keyFor(route.path),
          ...(bodyText !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: method === 'GET' || method === 'HEAD' ? undefined : bodyText,
        signal: ctrl.signal,
      });
      status = res.status;
      const streamTimer = setTimeout(() => ctrl.abort(), STREAM_READ_MS);
      try {
        text = await res.text();
      } catch {
        text = '<stream aborted after read window>';
      } finally {
        clearTimeout(streamTimer);
      }
    } catch (error) {
      status = 0;
      text = `request failed: ${String(error)}`;
    } finally {
      clearTimeout(timer);
    }
    await new Promise((r) => setImmediate(r));
    lastText = text;
    const key = `${method} ${route.path}`;
    const s = (stats[key] ??= {});
    s[String(status)] = (s[String(status)] ?? 0) + 1;
    const newLogs = t.logs.slice(logStart).flatMap((line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        return entry.level === 'error' || entry.level === 'fatal' ? [entry] : [];
      } catch {
        return [];
      }
    });
    for (const l of newLogs) errorLogs.push({ route: key, label, ...l });
    if (status >= 500 || status === 0 || newLogs.some((l) => l.msg === 'unhandled error')) {
      let parsed: any = {};
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not json */
      }
      findings.push({
        phase,
        route: key,
        label,
        method,
        url: url.length > 300 ? url.slice(0, 300) + `...(${url.length} chars)` : url,
        body: bodyText && bodyText.length > 400 ? bodyText.slice(0, 400) + `...(${bodyText.length} chars)` : bodyText,
        status,
        code: parsed?.error?.code,
        error_id: parsed?.error?.error_id,
        response: text.slice(0, 500),
        logs: newLogs,
      });
    }
    if (status >= 200 && status < 300 && DESTRUCTIVE.test(`${method.toLowerCase()} ${route.path}`) && reseeds < 260) {
      reseeds++;
      await seed();
    }
    return status;
  }

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, {
      env: { APP_SECRETS_MASTER_KEY: newMasterKey(), ENABLE_CLIENT_DATA: 'true' },
    });
    await seed();
  });

  afterAll(async () => {
    writeFileSync(`${OUT}/findings.json`, JSON.stringify(findings, null, 1));
    writeFileSync(`${OUT}/error-logs.json`, JSON.stringify(errorLogs, null, 1));
    writeFileSync(`${OUT}/baselines.json`, JSON.stringify(baselines, null, 1));
    writeFileSync(`${OUT}/stats.json`, JSON.stringify({ requests, reseeds, skipped, stats }, null, 1));
    await t?.close();
    await fake?.close();
  });

  it('probes every route', async () => {
    started = Date.now();
    const order = (r: RouteSpec) => {
      const k = `${r.method} ${r.path}`;
      if (r.path.startsWith('/accounts')) return 4;
      if (DESTRUCTIVE.test(k)) return 3;
      // Replaces the book's entries: after the entry routes.
      if (k === 'put /worldbooks/:id') return 2;
      return r.method === 'get' ? 0 : 1;
    };
    const routes = routeSpecs(t)
      .filter((r) => r.method !== 'all')
      .sort((x, y) => order(x) - order(y));
    const phases: Array<[string, (r: RouteSpec) => Promise<void>]> = [
      [
        'baseline',
        async (r) => {
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          const body = r.method === 'get' ? undefined : JSON.stringify(fill(base?.body ?? {}, ids()));
          const status = await send('baseline', r, 'baseline', urlFor(r) + queryString(base?.query), body);
          baselines[`${r.method.toUpperCase()} ${r.path}`] = { status, text: lastText.slice(0, 300) };
        },
      ],
      [
        'path',
        async (r) => {
          const n = paramsOf(r.path).length;
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          for (let index = 0; index < n; index++)
            for (const [label, value] of PATH_VALUES) {
              const body = r.method === 'get' ? undefined : JSON.stringify(fill(base?.body ?? {}, ids()));
              await send('path', r, `param ${paramsOf(r.path)[index].name}=${label}`, urlFor(r, { index, value }) + queryString(base?.query), body);
            }
        },
      ],
      [
        'query',
        async (r) => {
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          const body = r.method === 'get' ? undefined : JSON.stringify(fill(base?.body ?? {}, ids()));
          const names = [...new Set([...(r.query ?? []).map((f) => f.name), ...r.queryKeys])];
          if (names.length === 0) {
            await send('query', r, 'no-DTO query limit=1e400', urlFor(r) + '?limit=1e400&offset=-1', body);
            return;
          }
          for (const name of names) {
            const rest = { ...(base?.query ?? {}) };
            delete rest[name];
            const restQs = queryString(rest).replace(/^\?/, '');
            const join = (q: string) => `${urlFor(r)}?${restQs ? restQs + '&' : ''}${q}`;
            for (const [label, v] of QUERY_VALUES) await send('query', r, `${name}=${label}`, join(`${name}=${v}`), body);
            await send('query', r, `${name} repeated`, join(`${name}=1&${name}=2`), body);
            await send('query', r, `${name}[]`, join(`${name}[]=1`), body);
            await send('query', r, `${name}[a]`, join(`${name}[a]=1`), body);
            await send('query', r, `${name}[__proto__]`, join(`${name}[__proto__]=1`), body);
            await send('query', r, `${name} no value`, join(`${name}`), body);
          }
        },
      ],
      [
        'whole-body',
        async (r) => {
          if (r.method === 'get') return;
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          for (const [label, text] of WHOLE_BODIES)
            await send('whole-body', r, `body ${label}`, urlFor(r) + queryString(base?.query), text);
        },
      ],
      [
        'fields',
        async (r) => {
          if (r.method === 'get') return;
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          const baseBody = fill(base?.body ?? {}, ids());
          const paths = dtoPaths(r.body).concat(r.bodyKeys.map((k) => [k]));
          if (!paths.length) return;
          const seen = new Set<string>();
          for (const p of paths) {
            seen.add(JSON.stringify(p));
            const template = JSON.stringify(withSlot(fill(base?.body ?? {}, ids()), p));
            for (const [label, raw] of FULL_VALUES)
              await send('fields', r, `${p.join('.')}=${label}`, urlFor(r) + queryString(base?.query), template.replace(MARK, raw));
          }
          void baseBody;
        },
      ],
      [
        'deep-fields',
        async (r) => {
          if (r.method === 'get') return;
          const base = BASE[`${r.method.toUpperCase()} ${r.path}`];
          if (!base?.body) return;
          const dto = new Set(dtoPaths(r.body).map((p) => JSON.stringify(p)));
          const paths = basePaths(base.body).filter((p) => !dto.has(JSON.stringify(p)));
          for (const p of paths) {
            const template = JSON.stringify(withSlot(fill(base.body, ids()), p));
            for (const [label, raw] of SHORT_VALUES)
              await send('deep-fields', r, `${p.join('.')}=${label}`, urlFor(r) + queryString(base.query), template.replace(MARK, raw));
          }
        },
      ],
    ];
    let done = 0;
    for (const r of routes) {
      for (const [phase, run] of phases) {
        try {
          await run(r);
        } catch (error) {
          if (String(error).includes('budget')) {
            skipped.push(`${phase} ${r.method.toUpperCase()} ${r.path}`);
            continue;
          }
          throw error;
        }
      }
      done++;
      writeFileSync(`${OUT}/progress.json`, JSON.stringify({ done, of: routes.length, requests, reseeds, findings: findings.length, ms: Date.now() - started }));
    }
    expect(requests).toBeGreaterThan(0);
  });
});
