import { Inject, Injectable } from '@nestjs/common';
import {
  MODEL_SLOTS,
  type BindingParams,
  type EffectiveConfigWarning,
  type ModelSlot,
  type ModelSource,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { projectsRepository, type Db } from '@hearth/persistence';
import { CONFIG, DB, SECRET_BOX, type AppConfig, type SecretBox } from '@hearth/platform';
import { requireScopeSession } from './binding-scope';
import {
  envEntry,
  loadBindingEntries,
  loadOverrideEntry,
  pickEntry,
  type ResolutionEntry,
} from './llm-resolution';

/**
 * One slot as a turn would use it: the model instance (provider, model, base URL, masked key, params)
 * and whether a turn can use it: `ready`, `disabled` (bound to a disabled profile: a turn needing the
 * slot is refused) or `unconfigured` (falls to `env`, which has no provider or model).
 */
export interface ResolvedInstance {
  slot: ModelSlot;
  status: 'ready' | 'disabled' | 'unconfigured';
  source: ModelSource;
  scope: 'global' | 'project' | 'session' | null;
  profile_id: string | null;
  override_id: string | null;
  preset_name: string | null;
  provider: string | null;
  model_id: string | null;
  base_url: string | null;
  api_key_masked: string | null;
  params: BindingParams | null;
}

export interface ResolvedInstancesView {
  session_id: string | null;
  project_id: string | null;
  instances: ResolvedInstance[];
  warnings: EffectiveConfigWarning[];
}

export function resolvedInstance(slot: ModelSlot, entry: ResolutionEntry): ResolvedInstance {
  const { layer } = entry;
  const status =
    layer.source === 'env'
      ? layer.provider && layer.model_id
        ? 'ready'
        : 'unconfigured'
      : entry.profile?.status === 'disabled'
        ? 'disabled'
        : 'ready';
  return {
    slot,
    status,
    source: layer.source,
    scope: layer.scope,
    profile_id: layer.profile_id,
    override_id: layer.override_id,
    preset_name: layer.preset_name,
    provider: layer.provider,
    model_id: layer.model_id,
    base_url: layer.base_url,
    api_key_masked: entry.maskedKey,
    params: entry.rawParams,
  };
}

/**
 * `GET /llm-instances/resolved?session_id=` (spec 2 "Instance-side resolution"): what each slot's
 * model instance is for a turn, with the same layers as a turn: `session_profile` > `project_override`
 * (when a session names its Project) > `global_profile` > `env`. Keys are only shown masked.
 */
@Injectable()
export class GetLlmInstancesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(actor: Actor, sessionId: string | null): Promise<ResolvedInstancesView> {
    const session = sessionId === null ? null : await requireScopeSession(this.db, actor, sessionId);
    const warnings: EffectiveConfigWarning[] = [];
    const entries = [
      envEntry(this.config),
      ...(await loadBindingEntries(this.db, this.box, actor.accountId, sessionId, warnings)),
    ];
    if (session) {
      const project = await projectsRepository.findProject(this.db, session.project_id);
      const override = project && (await loadOverrideEntry(this.db, this.box, project, warnings));
      if (override) entries.push(override);
    }
    return {
      session_id: sessionId,
      project_id: session?.project_id ?? null,
      instances: MODEL_SLOTS.map((slot) => resolvedInstance(slot, pickEntry(slot, entries))),
      warnings,
    };
  }
}
