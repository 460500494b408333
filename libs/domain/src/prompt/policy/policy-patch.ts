import { validationError } from '../../errors';
import { resolvePolicy, type PolicyLayer, type PromptPolicy, type ResolvedPolicy } from './policy';

/**
 * The stored side of spec 2's prompt runtime policy: what a PATCH body may hold and the view of a stored
 * level (docs/decisions.md "Prompt runtime policy and injections"). Values are judged by the same leaf
 * rules `resolvePolicy` applies, so a value the routes accept is never dropped later with a warning.
 */

export const POLICY_SECTIONS = ['structure', 'delivery', 'budget', 'source_selection', 'visibility'] as const;
export type PolicySection = (typeof POLICY_SECTIONS)[number];

/** Spec 2's read-only `debug` section of a resolved policy: request options turn these on, never a layer. */
export const RESOLVED_POLICY_DEBUG = {
  include_prompt_snapshot: false,
  include_runtime_trace: false,
  include_worldbook_matches: false,
} as const;

export interface PolicyFieldProblem {
  field: string;
  problems: string[];
}

/**
 * The problems of a PATCH body's sections (`{structure?, delivery?, budget?, source_selection?,
 * visibility?}`): an unknown key at any depth, a value of the wrong type, or a section that is neither an
 * object nor null. `null` is valid at every level (it clears what it names). Fields are dotted paths.
 */
export function policyPatchProblems(sections: Record<string, unknown>): PolicyFieldProblem[] {
  const problems: PolicyFieldProblem[] = [];
  for (const key of Object.keys(sections)) {
    if (!(POLICY_SECTIONS as readonly string[]).includes(key))
      problems.push({ field: key, problems: [`${key} is not a policy section`] });
  }
  const known = Object.fromEntries(
    Object.entries(sections).filter(([key]) => (POLICY_SECTIONS as readonly string[]).includes(key)),
  );
  // resolvePolicy skips keys named `debug` silently (the read-only section); inside a section they are unknown.
  const debugKeys = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const at = path ? `${path}.${key}` : key;
      if (key === 'debug' && path) problems.push({ field: at, problems: [`${at} is not a policy field`] });
      else debugKeys(value, at);
    }
  };
  debugKeys(known, '');
  const { warnings } = resolvePolicy([{ source: 'session_policy', value: known }]);
  for (const warning of warnings) {
    const message =
      warning.code === 'policy_key_unknown'
        ? `${warning.path} is not a policy field`
        : `${warning.path} has an invalid value`;
    problems.push({ field: warning.path, problems: [message] });
  }
  return problems;
}

/**
 * The sections of a PATCH body, checked: at least one of the five sections must be present (a body with
 * none is 400), and every problem is a 400 `validation_error` naming its path in `details.fields`.
 */
export function requirePolicyPatch(body: Partial<Record<PolicySection, unknown>>): Record<string, unknown> {
  const sections = Object.fromEntries(
    POLICY_SECTIONS.filter((s) => body[s] !== undefined).map((s) => [s, body[s]]),
  );
  if (Object.keys(sections).length === 0) {
    throw validationError(`Send at least one of ${POLICY_SECTIONS.join(', ')}`, {
      fields: POLICY_SECTIONS.map((field) => ({ field, problems: ['at least one section is required'] })),
    });
  }
  const problems = policyPatchProblems(sections);
  if (problems.length > 0) {
    throw validationError(problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '), {
      fields: problems,
    });
  }
  return sections;
}

/** A resolved policy as the routes show it: the five sections plus the read-only `debug` section. */
export type ResolvedPolicyView = PromptPolicy & { debug: typeof RESOLVED_POLICY_DEBUG };

/** Resolves the stored layers (system_default < session_policy < branch_policy) for a policy view. */
export function resolveStoredPolicy(layers: PolicyLayer[]): ResolvedPolicy & { view: ResolvedPolicyView } {
  const resolved = resolvePolicy(layers);
  return { ...resolved, view: { ...resolved.policy, debug: { ...RESOLVED_POLICY_DEBUG } } };
}

/**
 * A stored value without the empty objects a clearing PATCH leaves behind (`{structure: {mode: null}}` on
 * `{structure: {mode: 'flattened'}}` stores `{}`), so `persistent_policy` holds only written fields.
 */
export function prunePolicyValue(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      const pruned = prunePolicyValue(inner as Record<string, unknown>);
      if (Object.keys(pruned).length > 0) out[key] = pruned;
    } else {
      out[key] = inner;
    }
  }
  return out;
}
