import { Inject, Injectable } from '@nestjs/common';
import {
  changedSettingsFields,
  DomainError,
  ID_PREFIX,
  newId,
  requireToolPolicyOverrideJson,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  projectSettingsRepository,
  toolPoliciesRepository,
  type Db,
  type ToolPolicyOverrideRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';
import { SettingsJournal } from './settings-journal';

export interface PutToolPolicyOverrideInput {
  base_policy_id: string;
  /** Default `{}`; optional `mode` and `tools`, replacing the base policy's. */
  override_json?: unknown;
  status?: 'active' | 'archived';
}

const FIELDS = ['override_json', 'status'] as const;

/**
 * `PUT /projects/:id/settings/tool-policy-overrides` (owner): one record per `base_policy_id`,
 * upserted. The policy must be in the Project's Workspace (404 `tool_policy_not_found`) and, for an
 * `active` override, active itself (409 `tool_policy_archived`); it is share-locked so a concurrent
 * delete is ordered.
 */
@Injectable()
export class PutToolPolicyOverrideUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
    private readonly journal: SettingsJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: PutToolPolicyOverrideInput,
  ): Promise<ToolPolicyOverrideRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const overrideJson = requireToolPolicyOverrideJson(input.override_json ?? {});
      const status = input.status ?? 'active';
      const policy = await toolPoliciesRepository.lockInWorkspace(
        uow.tx,
        project.workspace_id,
        input.base_policy_id,
        'share',
      );
      if (!policy) throw new DomainError('tool_policy_not_found', 404, 'Tool policy not found');
      if (status === 'active' && policy.status === 'archived')
        throw new DomainError(
          'tool_policy_archived',
          409,
          'The tool policy is archived; write the override as archived or restore the policy',
        );
      const previous = await projectSettingsRepository.findToolPolicyOverride(uow.tx, project.id, policy.id);
      const next = { override_json: overrideJson, status };
      const changed = changedSettingsFields(previous, next, FIELDS);
      if (previous && changed.length === 0) return previous;
      const now = Date.now();
      const row = await projectSettingsRepository.upsertToolPolicyOverride(uow.tx, {
        id: previous?.id ?? newId(ID_PREFIX.toolPolicyOverride),
        workspace_id: project.workspace_id,
        project_id: project.id,
        base_policy_id: policy.id,
        override_json: JSON.stringify(overrideJson),
        status,
        created_at: now,
        updated_at: now,
      });
      const ref = (o: ToolPolicyOverrideRow) => ({
        base_policy_id: o.base_policy_id,
        status: o.status,
        override_keys: Object.keys(o.override_json),
      });
      await this.journal.record(uow, actor, project, {
        kind: 'tool_policy_override',
        recordId: row.id,
        key: { base_policy_id: row.base_policy_id },
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
