import { Inject, Injectable } from '@nestjs/common';
import { MODEL_SLOTS, type BindingParams, type EffectiveConfigWarning, type ModelSlot } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { CONFIG, DB, SECRET_BOX, type AppConfig, type SecretBox } from '@hearth/platform';
import { requireScopeSession } from './binding-scope';
import { envEntry, loadBindingEntries, pickEntry } from './llm-resolution';

/** Spec 2 "Runtime slot resolution item". */
export interface RuntimeSlotItem {
  slot: ModelSlot;
  source: 'env' | 'global_profile' | 'session_profile';
  scope: 'global' | 'session' | null;
  profile_id: string | null;
  params: BindingParams | null;
  preset_name: string | null;
  provider: string | null;
  model_id: string | null;
}

/**
 * `GET /llm-profiles/runtime?session_id=`: the five slots resolved from the account's bindings (spec 2's
 * three sources: session over global, slot over `*`, finally `env`). Bindings whose key cannot be
 * decrypted are skipped. The Project override is not a source here: `GET /llm-instances/resolved` and
 * the effective-config views show it. A session of another account: 404 `session_scope_not_found`.
 */
@Injectable()
export class GetLlmRuntimeUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string | null,
  ): Promise<{ session_id: string | null; slots: RuntimeSlotItem[] }> {
    if (sessionId !== null) await requireScopeSession(this.db, actor, sessionId);
    const warnings: EffectiveConfigWarning[] = [];
    const entries = [
      envEntry(this.config),
      ...(await loadBindingEntries(this.db, this.box, actor.accountId, sessionId, warnings)),
    ];
    const slots = MODEL_SLOTS.map((slot): RuntimeSlotItem => {
      const { layer } = pickEntry(slot, entries);
      const env = layer.source === 'env';
      return {
        slot,
        source: layer.source as RuntimeSlotItem['source'],
        scope: env ? null : (layer.scope as 'global' | 'session'),
        profile_id: env ? null : layer.profile_id,
        params: env ? null : layer.params,
        preset_name: env ? null : layer.preset_name,
        provider: layer.provider,
        model_id: layer.model_id,
      };
    });
    return { session_id: sessionId, slots };
  }
}
