import type { PolicyWarning, ResolvedPolicyView } from '@hearth/domain/prompt/policy';
import { resolveStoredPolicy } from '@hearth/domain/prompt/policy';
import type { PromptPolicyRow } from '@hearth/persistence';

/** Spec 2's policy view (`GET`/`PATCH .../policy`), plus the layer each resolved leaf came from. */
export interface PromptPolicyView {
  /** The written fields of this level (`{}` when never written). */
  persistent_policy: Record<string, unknown>;
  persistent_policy_envelope: {
    version: number;
    updated_at: number;
    updated_by: string | null;
    value: Record<string, unknown>;
  } | null;
  resolved_policy: ResolvedPolicyView;
  /** Dotted leaf path → `system_default`, `session_policy` or `branch_policy`. */
  resolved_sources: Record<string, string>;
  warnings: PolicyWarning[];
}

/**
 * The view of one level: `own` is the level's stored row (session row for the session routes, branch
 * overlay for the branch routes); the resolved policy is system_default < session_policy < branch_policy.
 */
export function toPromptPolicyView(
  own: PromptPolicyRow | undefined,
  layers: { session: PromptPolicyRow | undefined; branch?: PromptPolicyRow | undefined },
): PromptPolicyView {
  const resolved = resolveStoredPolicy([
    ...(layers.session ? [{ source: 'session_policy' as const, value: layers.session.value }] : []),
    ...(layers.branch ? [{ source: 'branch_policy' as const, value: layers.branch.value }] : []),
  ]);
  return {
    persistent_policy: own?.value ?? {},
    persistent_policy_envelope: own
      ? { version: own.version, updated_at: own.updated_at, updated_by: own.updated_by, value: own.value }
      : null,
    resolved_policy: resolved.view,
    resolved_sources: resolved.sources,
    warnings: resolved.warnings,
  };
}
