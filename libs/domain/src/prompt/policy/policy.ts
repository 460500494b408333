import { SYSTEM_DEFAULT_PROMPT_POLICY, type PromptPolicySource } from '../../settings/effective-config.rules';

/**
 * Spec 2's prompt runtime policy (five sections) resolved over its layers, low to high:
 * `system_default < asset_default < session_policy < branch_policy < request_override <
 * provider_constraint`. Objects deep-merge; a `null` section or leaf in a layer clears what lower layers
 * set (back to the system default); a value of the wrong type is ignored with a warning naming the layer
 * and path. Every resolved leaf carries the layer it came from.
 */

export type StructureMode = 'default' | 'strict_alternating' | 'no_assistant' | 'flattened';

export interface PromptPolicy {
  structure: {
    mode: StructureMode;
    merge_adjacent_same_role: boolean;
    preserve_system_messages: boolean;
    assistant_rewrite_strategy: 'to_system' | 'to_user_transcript';
  };
  delivery: { allow_assistant_prefill: boolean; require_last_user: boolean; no_assistant: boolean };
  budget: { max_input_tokens: number; reserved_completion_tokens: number };
  source_selection: {
    history: { mode: 'full' | 'windowed'; max_messages: number | null };
    memory: { enabled: boolean };
    worldbook: { enabled: boolean };
    examples: { enabled: boolean };
  };
  visibility: {
    mode: 'allow_all_except_hidden' | 'deny_all_except_visible';
    hidden_floor_ranges: Array<{ start_floor_no: number; end_floor_no: number }>;
  };
}

export interface PolicyLayer {
  source: PromptPolicySource;
  /** A partial policy as stored or sent (unknown keys are reported, never applied). */
  value: unknown;
}

export interface PolicyWarning {
  code: 'policy_value_invalid' | 'policy_key_unknown' | 'policy_layer_invalid';
  source: PromptPolicySource;
  path: string;
  message: string;
}

export interface ResolvedPolicy {
  policy: PromptPolicy;
  /** `path` (dot-separated leaf) → layer that decided it. */
  sources: Record<string, PromptPolicySource>;
  warnings: PolicyWarning[];
}

type Check = (value: unknown) => boolean;
const bool: Check = (v) => typeof v === 'boolean';
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v);
const nonNegInt: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const posInt: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const ranges: Check = (v) =>
  Array.isArray(v) &&
  v.every(
    (r) =>
      typeof r === 'object' &&
      r !== null &&
      nonNegInt((r as Record<string, unknown>).start_floor_no) &&
      nonNegInt((r as Record<string, unknown>).end_floor_no) &&
      (r as Record<string, number>).start_floor_no <= (r as Record<string, number>).end_floor_no,
  );

/** Leaf path → validity check. */
const LEAVES: Record<string, Check> = {
  'structure.mode': oneOf('default', 'strict_alternating', 'no_assistant', 'flattened'),
  'structure.merge_adjacent_same_role': bool,
  'structure.preserve_system_messages': bool,
  'structure.assistant_rewrite_strategy': oneOf('to_system', 'to_user_transcript'),
  'delivery.allow_assistant_prefill': bool,
  'delivery.require_last_user': bool,
  'delivery.no_assistant': bool,
  'budget.max_input_tokens': posInt,
  'budget.reserved_completion_tokens': nonNegInt,
  'source_selection.history.mode': oneOf('full', 'windowed'),
  'source_selection.history.max_messages': (v) => v === null || posInt(v),
  'source_selection.memory.enabled': bool,
  'source_selection.worldbook.enabled': bool,
  'source_selection.examples.enabled': bool,
  'visibility.mode': oneOf('allow_all_except_hidden', 'deny_all_except_visible'),
  'visibility.hidden_floor_ranges': ranges,
};

const SECTIONS = ['structure', 'delivery', 'budget', 'source_selection', 'visibility'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function getPath(root: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), root);
}

function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = root;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export const DEFAULT_PROMPT_POLICY: PromptPolicy = clone(
  SYSTEM_DEFAULT_PROMPT_POLICY,
) as unknown as PromptPolicy;

/** Leaf paths of a partial layer, reporting unknown keys. `null` at a section or leaf clears it. */
function layerLeaves(
  layer: PolicyLayer,
  warnings: PolicyWarning[],
): Array<{ path: string; value: unknown; clear: boolean }> {
  const out: Array<{ path: string; value: unknown; clear: boolean }> = [];
  if (layer.value === null || layer.value === undefined) return out;
  if (!isObject(layer.value)) {
    warnings.push({
      code: 'policy_layer_invalid',
      source: layer.source,
      path: '',
      message: 'The layer is not an object',
    });
    return out;
  }
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (path in LEAVES) {
        out.push({ path, value, clear: value === null && path !== 'source_selection.history.max_messages' });
        continue;
      }
      const isBranch = Object.keys(LEAVES).some((leaf) => leaf.startsWith(`${path}.`));
      if (!isBranch || (!prefix && !SECTIONS.includes(key) && key !== 'debug')) {
        if (key !== 'debug')
          warnings.push({
            code: 'policy_key_unknown',
            source: layer.source,
            path,
            message: `${path} is not a policy field`,
          });
        continue;
      }
      if (value === null) {
        for (const leaf of Object.keys(LEAVES).filter((l) => l.startsWith(`${path}.`)))
          out.push({ path: leaf, value: null, clear: true });
      } else if (isObject(value)) {
        walk(value, path);
      } else {
        warnings.push({
          code: 'policy_value_invalid',
          source: layer.source,
          path,
          message: `${path} must be an object`,
        });
      }
    }
  };
  walk(layer.value, '');
  return out;
}

export function resolvePolicy(layers: PolicyLayer[]): ResolvedPolicy {
  const warnings: PolicyWarning[] = [];
  const policy = clone(DEFAULT_PROMPT_POLICY) as unknown as Record<string, unknown>;
  const sources: Record<string, PromptPolicySource> = Object.fromEntries(
    Object.keys(LEAVES).map((path) => [path, 'system_default' as PromptPolicySource]),
  );
  const order: PromptPolicySource[] = [
    'system_default',
    'asset_default',
    'session_policy',
    'branch_policy',
    'request_override',
    'provider_constraint',
  ];
  const sorted = [...layers].sort((a, b) => order.indexOf(a.source) - order.indexOf(b.source));
  for (const layer of sorted) {
    for (const { path, value, clear } of layerLeaves(layer, warnings)) {
      if (clear) {
        setPath(
          policy,
          path,
          clone(getPath(DEFAULT_PROMPT_POLICY as unknown as Record<string, unknown>, path)),
        );
        sources[path] = 'system_default';
        continue;
      }
      if (!LEAVES[path](value)) {
        warnings.push({
          code: 'policy_value_invalid',
          source: layer.source,
          path,
          message: `${path} has an invalid value; the ${sources[path]} value is kept`,
        });
        continue;
      }
      setPath(policy, path, clone(value));
      sources[path] = layer.source;
    }
  }
  return { policy: policy as unknown as PromptPolicy, sources, warnings };
}

/** Deep-merge of a stored policy with a PATCH (objects merge, `null` clears a section, absent stays). */
export function mergePolicyPatch(stored: unknown, patch: Record<string, unknown>): Record<string, unknown> {
  const base = isObject(stored) ? clone(stored) : {};
  const merge = (target: Record<string, unknown>, source: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(source)) {
      if (value === null) delete target[key];
      else if (isObject(value) && isObject(target[key])) merge(target[key] as Record<string, unknown>, value);
      else target[key] = clone(value);
    }
  };
  merge(base, patch);
  return base;
}
