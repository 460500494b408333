import { Inject, Injectable } from '@nestjs/common';
import {
  effectiveMcpBinding,
  effectiveToolPolicy,
  envModelLayer,
  llmOverrideWarning,
  projectOverrideLayer,
  resolveModelSlots,
  sourcedLeaves,
  SYSTEM_DEFAULT_PROMPT_POLICY,
  type EffectiveConfigWarning,
  type EffectiveMcpBinding,
  type EffectiveToolPolicy,
  type LlmOverrideJson,
  type ModelLayer,
  type ModelSlotItem,
  type ToolPolicyJson,
} from '@hearth/domain';
import {
  llmProfilesRepository,
  mcpServersRepository,
  projectSettingsRepository,
  toolPoliciesRepository,
  type Db,
  type Executor,
  type ProjectRow,
} from '@hearth/persistence';
import { CONFIG, DB, SECRET_BOX, type AppConfig, type SecretBox } from '@hearth/platform';
import { loadBindingEntries } from '../llm-profiles/llm-resolution';

export interface EffectiveConfigView {
  project_id: string;
  workspace_id: string;
  session_id: string | null;
  model_slots: ModelSlotItem[];
  tool_policy: { source: 'project_override' | 'none'; policies: EffectiveToolPolicy[] };
  mcp_bindings: EffectiveMcpBinding[];
  prompt_policy_defaults: unknown;
  warnings: EffectiveConfigWarning[];
}

/**
 * Builds the effective-config view of a Project (and, later, of a session inside it) from the stored
 * layers; the merge itself is libs/domain effective-config.rules. Nothing is inferred from write
 * responses: every read loads the layers afresh.
 */
@Injectable()
export class EffectiveConfigReader {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async read(project: ProjectRow, sessionId: string | null): Promise<EffectiveConfigView> {
    const warnings: EffectiveConfigWarning[] = [];
    const layers = await this.modelLayers(this.db, project, sessionId, warnings);
    const policies = await this.toolPolicies(this.db, project, warnings);
    const bindings = await this.mcpBindings(this.db, project, policies, warnings);
    return {
      project_id: project.id,
      workspace_id: project.workspace_id,
      session_id: sessionId,
      model_slots: resolveModelSlots(layers),
      tool_policy: { source: policies.length ? 'project_override' : 'none', policies },
      mcp_bindings: bindings,
      prompt_policy_defaults: sourcedLeaves(SYSTEM_DEFAULT_PROMPT_POLICY, 'system_default'),
      warnings,
    };
  }

  /**
   * The model layers of a Project (and session): env, the Project owner's `global_profile` bindings,
   * the session's `session_profile` bindings (docs/decisions.md "Model profiles": a binding whose key
   * cannot be decrypted is skipped with a warning) and the Project override; resolveModelSlot orders them.
   */
  private async modelLayers(
    db: Executor,
    project: ProjectRow,
    sessionId: string | null,
    warnings: EffectiveConfigWarning[],
  ): Promise<ModelLayer[]> {
    const layers: ModelLayer[] = [envModelLayer(this.config.llm)];
    for (const entry of await loadBindingEntries(db, this.box, project.account_id, sessionId, warnings))
      layers.push(entry.layer);
    const override = await projectSettingsRepository.findLlmOverride(db, project.id);
    if (override) {
      const profile =
        (await llmProfilesRepository.findUsableProfile(db, project.account_id, override.base_profile_id)) ??
        null;
      const warning = llmOverrideWarning(override, profile);
      if (warning) warnings.push(warning);
      else if (profile)
        layers.push(
          projectOverrideLayer(
            { id: override.id, override_json: override.override_json as LlmOverrideJson },
            profile,
          ),
        );
    }
    return layers;
  }

  /** Active overrides whose base policy exists and is active; the others are reported in warnings. */
  private async toolPolicies(
    db: Executor,
    project: ProjectRow,
    warnings: EffectiveConfigWarning[],
  ): Promise<EffectiveToolPolicy[]> {
    const overrides = (await projectSettingsRepository.listToolPolicyOverrides(db, project.id)).filter(
      (o) => o.status === 'active',
    );
    const policies = await toolPoliciesRepository.findByIds(
      db,
      project.workspace_id,
      overrides.map((o) => o.base_policy_id),
    );
    const out: EffectiveToolPolicy[] = [];
    for (const override of overrides) {
      const policy = policies.find((p) => p.id === override.base_policy_id);
      if (!policy || policy.status !== 'active') {
        warnings.push({
          code: policy ? 'tool_policy_archived' : 'tool_policy_not_found',
          message: policy
            ? 'The override’s base policy is archived; it is not applied'
            : 'The override’s base policy no longer exists',
          override_id: override.id,
          base_policy_id: override.base_policy_id,
        });
        continue;
      }
      out.push(
        effectiveToolPolicy(
          {
            id: override.id,
            base_policy_id: override.base_policy_id,
            override_json: override.override_json as Partial<ToolPolicyJson>,
          },
          { name: policy.name, policy_json: policy.policy_json },
        ),
      );
    }
    return out;
  }

  /** Enabled bindings whose server exists and is enabled; the others are reported in warnings. */
  private async mcpBindings(
    db: Executor,
    project: ProjectRow,
    policies: EffectiveToolPolicy[],
    warnings: EffectiveConfigWarning[],
  ): Promise<EffectiveMcpBinding[]> {
    const bindings = (await projectSettingsRepository.listMcpBindings(db, project.id)).filter(
      (b) => b.status === 'enabled',
    );
    const servers = await mcpServersRepository.findByIds(
      db,
      project.workspace_id,
      bindings.map((b) => b.mcp_server_id),
    );
    const out: EffectiveMcpBinding[] = [];
    for (const binding of bindings) {
      const server = servers.find((s) => s.id === binding.mcp_server_id);
      if (!server || server.status !== 'enabled') {
        warnings.push({
          code: server ? 'mcp_server_disabled' : 'mcp_server_not_found',
          message: server
            ? 'The binding’s MCP server is disabled; it is not offered'
            : 'The binding’s MCP server no longer exists',
          binding_id: binding.id,
          mcp_server_id: binding.mcp_server_id,
        });
        continue;
      }
      out.push(effectiveMcpBinding(binding, server, policies));
    }
    return out;
  }
}
