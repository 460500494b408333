import {
  envModelLayer,
  llmOverrideParams,
  llmOverrideWarning,
  MODEL_SOURCE_PRECEDENCE,
  projectOverrideLayer,
  type BindingParams,
  type EffectiveConfigWarning,
  type LlmOverrideJson,
  type ModelLayer,
  type ModelSlot,
} from '@hearth/domain';
import {
  llmBindingsRepository,
  llmProfilesRepository,
  projectSettingsRepository,
  type Executor,
  type LlmBindingRow,
  type LlmProfileOverrideRow,
  type LlmProfileRow,
} from '@hearth/persistence';
import { maskSecret, type AppConfig, type SecretBox } from '@hearth/platform';
import { tryReadKey, type KeyReadResult } from './llm-profile-rules';

/**
 * Model slot resolution (spec 2 "Runtime slot resolution item", docs/decisions.md "Model profiles"):
 * the layers a slot can come from, each with what a call needs (the profile, its raw params, its key).
 * Sources, highest first: `session_profile` > `project_override` > `global_profile` > `env`; inside a
 * source a binding of the slot beats one of `*` (libs/domain effective-config.rules). A binding whose
 * key cannot be decrypted (or any binding while no master key is configured) is skipped with a
 * warning, so the slot falls back, finally to `env`. A binding of a disabled profile is NOT skipped:
 * the slot resolves to it and a turn reports it (spec 2 lists only undecryptable bindings as skipped).
 */
export interface ResolutionEntry {
  layer: ModelLayer;
  /** The profile under a binding or override layer; null for `env`. */
  profile: LlmProfileRow | null;
  /** The params as stored (a null field cancels the request's value); null: none. */
  rawParams: BindingParams | null;
  /** The decrypted key (env: LLM_API_KEY). Never leaves the server. */
  apiKey: string | null;
  /** The masked form of the key (env: masked LLM_API_KEY). */
  maskedKey: string | null;
}

export function envEntry(config: AppConfig): ResolutionEntry {
  return {
    layer: envModelLayer(config.llm),
    profile: null,
    rawParams: null,
    apiKey: config.llm.apiKey,
    maskedKey: config.llm.apiKey ? maskSecret(config.llm.apiKey) : null,
  };
}

const keyWarning = (
  code: 'secret_invalid_format' | 'secret_unavailable',
  where: Record<string, unknown>,
): EffectiveConfigWarning => ({
  code,
  message:
    code === 'secret_unavailable'
      ? 'No secrets master key is configured; the binding is skipped'
      : 'The profile’s stored API key cannot be decrypted; the binding is skipped',
  ...where,
});

/**
 * The account's global bindings and, with a session, the session's bindings, as layers. Skipped
 * bindings and bindings of disabled profiles are reported in `warnings`.
 */
export async function loadBindingEntries(
  db: Executor,
  box: SecretBox,
  accountId: string,
  sessionId: string | null,
  warnings: EffectiveConfigWarning[],
): Promise<ResolutionEntry[]> {
  const bindings = await llmBindingsRepository.listForResolution(db, accountId, sessionId);
  const profiles = await llmProfilesRepository.findByIds(db, accountId, [
    ...new Set(bindings.map((b) => b.profile_id)),
  ]);
  return bindingEntriesFrom(
    bindings.map((binding) => ({
      binding,
      profile: profiles.find((p) => p.id === binding.profile_id) ?? null,
    })),
    (ciphertext) => tryReadKey(box, ciphertext),
    warnings,
  );
}

/** Reads a stored key: `tryReadKey` with the process's SecretBox, possibly cached by ciphertext. */
export type KeyReader = (ciphertext: string) => KeyReadResult;

/**
 * The layers of bindings already read with their profiles (null: missing); skipped bindings and
 * bindings of disabled profiles are reported in `warnings`, in the order of `rows`.
 */
export function bindingEntriesFrom(
  rows: ReadonlyArray<{ binding: LlmBindingRow; profile: LlmProfileRow | null }>,
  readKey: KeyReader,
  warnings: EffectiveConfigWarning[],
): ResolutionEntry[] {
  const entries: ResolutionEntry[] = [];
  // Stable order: global before session, then slot; the resolver picks by source and slot anyway.
  for (const { binding, profile } of rows) {
    const where = {
      binding_scope: binding.scope,
      scope_id: binding.scope_id,
      instance_slot: binding.instance_slot,
      profile_id: binding.profile_id,
    };
    if (!profile || profile.status === 'deleted') {
      warnings.push({
        code: 'profile_not_found',
        message: 'The bound profile no longer exists; the binding is skipped',
        ...where,
      });
      continue;
    }
    const key = readKey(profile.api_key_ciphertext);
    if (!key.ok) {
      warnings.push(keyWarning(key.code, where));
      continue;
    }
    if (profile.status === 'disabled')
      warnings.push({
        code: 'profile_disabled',
        message: 'The bound profile is disabled; turns using this slot are refused',
        ...where,
      });
    const source = binding.scope === 'global' ? 'global_profile' : 'session_profile';
    const params = (binding.params as BindingParams | null) ?? null;
    entries.push({
      layer: {
        source,
        slot: binding.instance_slot,
        scope: binding.scope,
        profile_id: profile.id,
        override_id: null,
        preset_name: profile.preset_name,
        provider: profile.provider,
        model_id: profile.model_id,
        base_url: profile.base_url,
        params,
        field_sources: {
          provider: 'profile',
          model_id: 'profile',
          base_url: 'profile',
          params: params ? source : null,
        },
      },
      profile,
      rawParams: params,
      apiKey: key.apiKey,
      maskedKey: profile.api_key_masked,
    });
  }
  return entries;
}

/**
 * The Project LLM override as a layer for turns: the same layer the effective config shows (a missing,
 * deleted or disabled base profile drops it with a warning), plus its key (an undecryptable key drops it
 * too) and its params as written (a null cancels the request's value).
 */
export async function loadOverrideEntry(
  db: Executor,
  box: SecretBox,
  project: { id: string; account_id: string },
  warnings: EffectiveConfigWarning[],
): Promise<ResolutionEntry | null> {
  const override = await projectSettingsRepository.findLlmOverride(db, project.id);
  if (!override) return null;
  const profile =
    (await llmProfilesRepository.findUsableProfile(db, project.account_id, override.base_profile_id)) ?? null;
  return overrideEntryFrom(override, profile, (ciphertext) => tryReadKey(box, ciphertext), warnings);
}

/**
 * The Project override layer from an override already read with its base profile (null: missing or
 * deleted), as `loadOverrideEntry` builds it.
 */
export function overrideEntryFrom(
  override: LlmProfileOverrideRow,
  profile: LlmProfileRow | null,
  readKey: KeyReader,
  warnings: EffectiveConfigWarning[],
): ResolutionEntry | null {
  const warning = llmOverrideWarning(override, profile);
  if (warning || !profile) {
    if (warning) warnings.push(warning);
    return null;
  }
  const key = readKey(profile.api_key_ciphertext);
  if (!key.ok) {
    warnings.push(keyWarning(key.code, { override_id: override.id, profile_id: profile.id }));
    return null;
  }
  const overrideJson = override.override_json as LlmOverrideJson;
  return {
    layer: projectOverrideLayer({ id: override.id, override_json: overrideJson }, profile),
    profile,
    rawParams: llmOverrideParams(overrideJson),
    apiKey: key.apiKey,
    maskedKey: profile.api_key_masked,
  };
}

/** The entry a slot resolves to: highest source first, inside it the slot's own binding before `*`. */
export function pickEntry(slot: ModelSlot, entries: readonly ResolutionEntry[]): ResolutionEntry {
  for (const source of MODEL_SOURCE_PRECEDENCE) {
    const ofSource = entries.filter((e) => e.layer.source === source);
    const entry = ofSource.find((e) => e.layer.slot === slot) ?? ofSource.find((e) => e.layer.slot === '*');
    if (entry) return entry;
  }
  throw new Error('pickEntry needs the env entry');
}

/** A resolved slot as cached: the entry it resolved to and the warnings of that resolution. */
export interface CachedSlotResolution {
  /** The account's resolution version the entry was read under. */
  version: number;
  entry: ResolutionEntry;
  warnings: readonly EffectiveConfigWarning[];
}

/**
 * The per-process cache of a resolver (docs/decisions.md "Model profiles: resolution cache"): resolved
 * slots by (account, session, slot), each valid while the account's resolution version is the one it
 * was read under (checked on every use, in the statement that also checks the session), and stored
 * keys read by ciphertext (a ciphertext always decrypts to the same key under the process's master
 * keys; a new key is a new ciphertext). Both maps are bounded; the oldest entries go first.
 */
export class LlmResolutionCache {
  private readonly slots = new Map<string, CachedSlotResolution>();
  private readonly keys = new Map<string, KeyReadResult>();

  constructor(
    private readonly maxSlots = 20_000,
    private readonly maxKeys = 2_000,
  ) {}

  static slotKey(accountId: string, sessionId: string, slot: ModelSlot): string {
    return `${accountId}\u0000${sessionId}\u0000${slot}`;
  }

  getSlot(key: string): CachedSlotResolution | undefined {
    return this.slots.get(key);
  }

  /** Keeps the newer of two concurrent cold reads (a lower version would only cost a miss). */
  setSlot(key: string, value: CachedSlotResolution): void {
    const current = this.slots.get(key);
    if (current && current.version > value.version) return;
    this.slots.delete(key);
    this.slots.set(key, value);
    evict(this.slots, this.maxSlots);
  }

  deleteSlot(key: string): void {
    this.slots.delete(key);
  }

  /** A KeyReader over `box` that remembers each ciphertext's result. */
  keyReader(box: SecretBox): KeyReader {
    return (ciphertext) => {
      let result = this.keys.get(ciphertext);
      if (!result) {
        result = tryReadKey(box, ciphertext);
        this.keys.set(ciphertext, result);
        evict(this.keys, this.maxKeys);
      }
      return result;
    };
  }

  /** Forgets everything (the next resolution of every slot is cold). */
  clear(): void {
    this.slots.clear();
    this.keys.clear();
  }

  get size(): { slots: number; keys: number } {
    return { slots: this.slots.size, keys: this.keys.size };
  }
}

function evict<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value as K);
}
