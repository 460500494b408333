import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type EffectiveConfigWarning, type ModelSlot, type ModelSource } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  llmBindingsRepository,
  llmProfilesRepository,
  sessionsRepository,
  type Db,
} from '@hearth/persistence';
import {
  CONFIG,
  DB,
  SECRET_BOX,
  type AppConfig,
  type LlmTarget,
  type ProviderKind,
  type SecretBox,
} from '@hearth/platform';
import { mergeTurnParams, profileNotFound, readKey } from './llm-profile-rules';
import {
  bindingEntriesFrom,
  envEntry,
  LlmResolutionCache,
  overrideEntryFrom,
  pickEntry,
  type CachedSlotResolution,
  type ResolutionEntry,
} from './llm-resolution';

/**
 * A cached resolution sets `last_used_at` of its profile at most once per this interval (the cold
 * resolution of a slot always sets it); docs/decisions.md "Model profiles: resolution cache".
 */
export const LAST_USED_TOUCH_INTERVAL_MS = 60_000;

export interface ResolveModelOptions {
  /** A profile the request names itself (a turn config's profile): used instead of the bindings. */
  profileId?: string | null;
  /**
   * Whether the turn cannot go on without this slot (default true). A slot bound to a disabled profile
   * is refused with 409 `instance_slot_disabled_required` when required, else reported as disabled.
   */
  required?: boolean;
}

export interface ResolvedTurnModel {
  status: 'ready';
  slot: ModelSlot;
  source: ModelSource | 'request_profile';
  scope: 'global' | 'project' | 'session' | null;
  profile_id: string | null;
  override_id: string | null;
  preset_name: string | null;
  /** What the LLM client is called with, the decrypted key included: never log or return it. */
  target: LlmTarget;
  /** The request's generation_params under the binding's params (a binding null removes the field). */
  params: Record<string, unknown>;
  warnings: EffectiveConfigWarning[];
}

export interface DisabledTurnSlot {
  status: 'disabled';
  slot: ModelSlot;
  source: ModelSource;
  scope: 'global' | 'project' | 'session' | null;
  profile_id: string | null;
  warnings: EffectiveConfigWarning[];
}

/**
 * The model of one generation slot of a turn (docs/decisions.md "Model profiles"). The caller (the turn
 * code) has already checked the actor's access to the session. Order:
 * 1. A profile named by the request: 404 `profile_not_found` (missing, deleted, other account), 409
 *    `profile_disabled`, 500 `secret_invalid_format` / 503 `secret_unavailable` for its key.
 * 2. Otherwise the layers: `session_profile` > `project_override` > `global_profile` > `env`, slot over
 *    `*`; undecryptable bindings are skipped. A slot bound to a disabled profile is refused (409
 *    `instance_slot_disabled_required`) or, when not required, answered as `disabled`.
 * 3. `env` without LLM_PROVIDER/LLM_MODEL: 503 `model_not_configured`.
 * The profile used gets `last_used_at`.
 *
 * Step 2 is one statement: cold, the session, bindings, override and the account's resolution
 * version (`llmBindingsRepository.loadTurnResolution`); the resolved slot is then cached per process
 * (`cache`) and a later resolution of the same (account, session, slot) only checks the session and
 * the version (`checkTurnResolution`). Every write to a profile, binding or Project override bumps
 * the version in its transaction (docs/decisions.md "Model profiles: resolution cache").
 */
@Injectable()
export class ResolveModelForTurnUseCase {
  /** Resolved slots and read keys of this process (clear() makes the next resolutions cold). */
  readonly cache = new LlmResolutionCache();

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    slot: ModelSlot,
    requestParams: Record<string, unknown> | null = null,
    options: ResolveModelOptions = {},
  ): Promise<ResolvedTurnModel | DisabledTurnSlot> {
    if (options.profileId) return this.named(actor, sessionId, slot, requestParams, options.profileId);

    const key = LlmResolutionCache.slotKey(actor.accountId, sessionId, slot);
    const cached = this.cache.getSlot(key);
    const now = Date.now();
    if (cached) {
      const profile = cached.entry.profile;
      const check = await llmBindingsRepository.checkTurnResolution(this.db, {
        sessionId,
        accountId: actor.accountId,
        version: cached.version,
        profileId: profile?.status === 'active' ? profile.id : null,
        now,
        touchBefore: now - LAST_USED_TOUCH_INTERVAL_MS,
      });
      if (!check.found) {
        this.cache.deleteSlot(key);
        throw sessionNotFound();
      }
      if (check.version === cached.version) return this.answer(slot, cached, requestParams, options);
    }

    const rows = await llmBindingsRepository.loadTurnResolution(this.db, {
      sessionId,
      accountId: actor.accountId,
      slot,
      now,
      touch: this.box.available,
    });
    if (!rows.found) throw sessionNotFound();
    const readKey = this.cache.keyReader(this.box);
    const warnings: EffectiveConfigWarning[] = [];
    const entries: ResolutionEntry[] = [
      envEntry(this.config),
      ...bindingEntriesFrom(rows.bindings, readKey, warnings),
    ];
    const override =
      rows.override && overrideEntryFrom(rows.override.override, rows.override.profile, readKey, warnings);
    if (override) entries.push(override);
    const resolved: CachedSlotResolution = {
      version: rows.version,
      entry: pickEntry(slot, entries),
      warnings,
    };
    // The statement set last_used_at of the slot's expected profile; a key it could not judge (unreadable)
    // can make the slot resolve elsewhere, which is then marked here.
    const used = resolved.entry.profile;
    if (used?.status === 'active' && rows.touchedProfileId !== used.id)
      await llmProfilesRepository.touchLastUsed(this.db, used.id, now);
    this.cache.setSlot(key, resolved);
    return this.answer(slot, resolved, requestParams, options);
  }

  /** A profile named by the request (a turn config that picks one), used instead of the bindings. */
  private async named(
    actor: Actor,
    sessionId: string,
    slot: ModelSlot,
    requestParams: Record<string, unknown> | null,
    profileId: string,
  ): Promise<ResolvedTurnModel> {
    const session = await sessionsRepository.findSession(this.db, sessionId);
    if (!session || session.account_id !== actor.accountId) throw sessionNotFound();
    const profile = await llmProfilesRepository.findUsableProfile(this.db, session.account_id, profileId);
    if (!profile) throw profileNotFound();
    if (profile.status === 'disabled')
      throw new DomainError('profile_disabled', 409, 'The requested LLM profile is disabled', {
        profile_id: profile.id,
      });
    const apiKey = readKey(this.box, profile);
    await llmProfilesRepository.touchLastUsed(this.db, profile.id);
    return {
      status: 'ready',
      slot,
      source: 'request_profile',
      scope: null,
      profile_id: profile.id,
      override_id: null,
      preset_name: profile.preset_name,
      target: { provider: profile.provider, model: profile.model_id, baseUrl: profile.base_url, apiKey },
      params: mergeTurnParams(requestParams, null),
      warnings: [],
    };
  }

  /** The answer for a resolved slot (cold or cached): the same checks and result either way. */
  private answer(
    slot: ModelSlot,
    resolved: CachedSlotResolution,
    requestParams: Record<string, unknown> | null,
    options: ResolveModelOptions,
  ): ResolvedTurnModel | DisabledTurnSlot {
    const { entry } = resolved;
    const { layer, profile } = entry;
    const warnings = [...resolved.warnings];
    if (profile?.status === 'disabled') {
      if (options.required ?? true)
        throw new DomainError(
          'instance_slot_disabled_required',
          409,
          `The ${slot} slot is bound to a disabled LLM profile and this turn needs it`,
          { slot, profile_id: profile.id, source: layer.source, scope: layer.scope },
        );
      return {
        status: 'disabled',
        slot,
        source: layer.source,
        scope: layer.scope,
        profile_id: profile.id,
        warnings,
      };
    }
    if (!layer.provider || !layer.model_id)
      throw new DomainError(
        'model_not_configured',
        503,
        'No model is configured for this slot: bind an LLM profile or set LLM_PROVIDER and LLM_MODEL',
        { slot },
      );
    return {
      status: 'ready',
      slot,
      source: layer.source,
      scope: layer.scope,
      profile_id: layer.profile_id,
      override_id: layer.override_id,
      preset_name: layer.preset_name,
      target: {
        provider: layer.provider as ProviderKind,
        model: layer.model_id,
        baseUrl: layer.base_url,
        apiKey: entry.apiKey,
      },
      params: mergeTurnParams(requestParams, entry.rawParams),
      warnings,
    };
  }
}

const sessionNotFound = () => new DomainError('not_found', 404, 'Session not found');
