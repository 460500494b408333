import { DomainError } from '@hearth/domain';
import type { McpServerRow } from '@hearth/persistence';

/** Missing, or of another account or Workspace: 404 `not_found` (legacy resource route). */
export const mcpServerNotFound = () => new DomainError('not_found', 404, 'MCP server not found');

/** What an operation log keeps of a server. */
export const mcpServerRef = (s: McpServerRow) => ({
  name: s.name,
  url: s.url,
  status: s.status,
  tool_count: s.tools.length,
});
