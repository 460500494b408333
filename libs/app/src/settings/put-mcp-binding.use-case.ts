import { Inject, Injectable } from '@nestjs/common';
import {
  changedSettingsFields,
  DomainError,
  ID_PREFIX,
  newId,
  requireSettingsObject,
  resolveAllowedTools,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  mcpServersRepository,
  projectSettingsRepository,
  type Db,
  type McpBindingRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';
import { SettingsJournal } from './settings-journal';

export interface PutMcpBindingInput {
  mcp_server_id: string;
  /** Default `[]` (unrestricted); duplicates removed; every name must be in the server's catalog. */
  allowed_tools?: string[];
  /** Default `{}`: server-specific settings, passed to the server as they are. */
  config_override_json?: unknown;
  status?: 'enabled' | 'disabled';
}

const FIELDS = ['status', 'allowed_tools', 'config_override_json'] as const;

/**
 * `PUT /projects/:id/settings/mcp-bindings` (owner): one record per `mcp_server_id`, upserted. The
 * server must be in the Project's Workspace (404 `mcp_server_not_found`) and, for an `enabled`
 * binding, enabled itself (409 `mcp_server_disabled`); it is share-locked so a concurrent delete is
 * ordered. `allowed_tools` outside its catalog: 400 `validation_error` with `details.unknown_tools`.
 */
@Injectable()
export class PutMcpBindingUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
    private readonly journal: SettingsJournal,
  ) {}

  async execute(actor: Actor, projectId: string, input: PutMcpBindingInput): Promise<McpBindingRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const config = requireSettingsObject('config_override_json', input.config_override_json ?? {});
      const status = input.status ?? 'enabled';
      const server = await mcpServersRepository.lockInWorkspace(
        uow.tx,
        project.workspace_id,
        input.mcp_server_id,
        'share',
      );
      if (!server) throw new DomainError('mcp_server_not_found', 404, 'MCP server not found');
      if (status === 'enabled' && server.status === 'disabled')
        throw new DomainError(
          'mcp_server_disabled',
          409,
          'The MCP server is disabled; bind it as disabled or enable it',
        );
      const allowedTools = resolveAllowedTools(input.allowed_tools ?? [], server.tools);
      const previous = await projectSettingsRepository.findMcpBinding(uow.tx, project.id, server.id);
      const next = { status, allowed_tools: allowedTools, config_override_json: config };
      const changed = changedSettingsFields(previous, next, FIELDS);
      if (previous && changed.length === 0) return previous;
      const now = Date.now();
      const row = await projectSettingsRepository.upsertMcpBinding(uow.tx, {
        id: previous?.id ?? newId(ID_PREFIX.mcpBinding),
        workspace_id: project.workspace_id,
        project_id: project.id,
        mcp_server_id: server.id,
        status,
        allowed_tools: JSON.stringify(allowedTools),
        config_override_json: JSON.stringify(config),
        created_at: now,
        updated_at: now,
      });
      const ref = (b: McpBindingRow) => ({
        mcp_server_id: b.mcp_server_id,
        status: b.status,
        allowed_tools: b.allowed_tools,
        config_keys: Object.keys(b.config_override_json),
      });
      await this.journal.record(uow, actor, project, {
        kind: 'mcp_binding',
        recordId: row.id,
        key: { mcp_server_id: row.mcp_server_id },
        status: row.status,
        created: !previous,
        changedFields: changed,
        before: previous ? ref(previous) : null,
        after: ref(row),
      });
      return row;
    });
  }
}
