import { DomainError } from '@hearth/domain';
import type { ToolPolicyRow } from '@hearth/persistence';

/** Missing, or of another account or Workspace: 404 `not_found` (legacy resource route). */
export const toolPolicyNotFound = () => new DomainError('not_found', 404, 'Tool policy not found');

/** What an operation log keeps of a policy. */
export const toolPolicyRef = (p: ToolPolicyRow) => ({
  name: p.name,
  status: p.status,
  mode: p.policy_json.mode,
  tool_count: p.policy_json.tools.length,
});
