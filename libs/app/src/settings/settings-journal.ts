import { Injectable } from '@nestjs/common';
import { SETTINGS_KINDS, SETTINGS_UPDATED_EVENT, type SettingsKind } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { projectSettingsRepository, type ProjectRow, type Tx, type UnitOfWork } from '@hearth/persistence';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { llmOverrideView, mcpBindingView, toolPolicyOverrideView } from './settings-views';

export interface SettingsWrite {
  kind: SettingsKind;
  recordId: string;
  /** What identifies the record besides its id (base_profile_id, mcp_server_id or base_policy_id). */
  key: Record<string, string>;
  status: string;
  created: boolean;
  changedFields: string[];
  /** Essential fields before and after (no override bodies: their keys only). */
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
}

/**
 * The record of one settings PUT, in its transaction: the operation log
 * (`project_settings.<kind>.put`), the Project event (`project.settings_updated`, visibility
 * `owner`, payload: setting kind, record id, changed_fields) and the Project's `settings_override`
 * mirror, rebuilt from the three override tables.
 */
@Injectable()
export class SettingsJournal {
  constructor(
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async record(uow: UnitOfWork, actor: Actor, project: ProjectRow, write: SettingsWrite): Promise<void> {
    const log = await this.logs.write(uow.tx, actor, {
      action: SETTINGS_KINDS[write.kind].log,
      account_id: project.account_id,
      workspace_id: project.workspace_id,
      project_id: project.id,
      target_type: `project_${write.kind}`,
      target_id: write.recordId,
      before_ref: write.before,
      after_ref: write.after,
      diff: { changed_fields: write.changedFields },
      metadata: { setting_kind: write.kind, created: write.created, ...write.key },
    });
    await this.events.record(uow, {
      project,
      type: SETTINGS_UPDATED_EVENT,
      visibility: 'owner',
      actor,
      operation_log_id: log.id,
      payload: {
        setting_kind: write.kind,
        record_id: write.recordId,
        ...write.key,
        status: write.status,
        created: write.created,
        changed_fields: write.changedFields,
      },
    });
    await this.mirror(uow.tx, project.id);
  }

  /** `settings_override` of the Project: every override record, as the GET routes show them. */
  private async mirror(tx: Tx, projectId: string): Promise<void> {
    // One connection: the three reads run one after another.
    const llm = await projectSettingsRepository.findLlmOverride(tx, projectId);
    const bindings = await projectSettingsRepository.listMcpBindings(tx, projectId);
    const policies = await projectSettingsRepository.listToolPolicyOverrides(tx, projectId);
    const strip = <T extends { workspace_id: string; project_id: string }>({
      workspace_id: _w,
      project_id: _p,
      ...rest
    }: T) => rest;
    const json = JSON.stringify({
      llm_profile_override: llm ? strip(llmOverrideView(llm)) : null,
      mcp_bindings: bindings.map((b) => strip(mcpBindingView(b))),
      tool_policy_overrides: policies.map((p) => strip(toolPolicyOverrideView(p))),
    });
    await projectSettingsRepository.writeProjectSettingsOverride(tx, projectId, json, Date.now());
  }
}
