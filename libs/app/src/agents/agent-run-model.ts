import { Inject, Injectable } from '@nestjs/common';
import { AGENT_RUN_MODEL_TIMEOUT_MS, DomainError, type ModelSlot } from '@hearth/domain';
import { llmProfilesRepository, type Db, type ProjectRow } from '@hearth/persistence';
import {
  CONFIG,
  DB,
  findSsrfBlocked,
  LLM_CLIENT,
  LlmError,
  SECRET_BOX,
  type AppConfig,
  type LlmClient,
  type LlmMessage,
  type LlmParams,
  type LlmResult,
  type LlmTarget,
  type ProviderKind,
  type SecretBox,
} from '@hearth/platform';
import type { EffectiveConfigWarning } from '@hearth/domain';
import { JobFailure, type JobErrorClass } from '../jobs/job-failure';
import { mergeTurnParams, readKey } from '../llm-profiles/llm-profile-rules';
import { envEntry, loadBindingEntries, loadOverrideEntry, pickEntry } from '../llm-profiles/llm-resolution';
import { generationError } from '../turns/generate-errors';

/** The slot an agent run resolves when its binding names no profile: the one turns use. */
export const AGENT_RUN_MODEL_SLOT: ModelSlot = 'narrator';

export interface AgentRunModelChoice {
  /** What the call is made with, the decrypted key included: never log or return it. */
  target: LlmTarget;
  params: LlmParams;
  /** `agent_profile` (the binding's llm_profile_id) or the slot's source (`session_profile` … `env`). */
  source: string;
  profile_id: string | null;
}

const fatal = (code: string, message: string) => new JobFailure(message, code, 'fatal');

/**
 * The model of an agent run and its one non-streamed call (docs/decisions.md "Agents: runs"):
 * - the binding's effective `llm_profile_id` when set: a profile of the binding's account (missing or
 *   deleted `profile_not_found`, disabled `profile_disabled`, unreadable key `secret_*`: all fatal);
 * - else the Project's runtime resolution of the `narrator` slot, as turns resolve it: the job's session
 *   binding > the Project's LLM override > the account's global binding > `env`; a slot bound to a
 *   disabled profile is fatal `instance_slot_disabled_required`;
 * - `env` without LLM_PROVIDER/LLM_MODEL: fatal `model_not_configured` (the turns' code).
 * A provider failure is retryable (5xx, 408, 429, timeout, network, unreadable answer) or fatal (other
 * 4xx, the network guard, configuration), with the turns' codes (`generation_upstream_failed`, ...).
 */
@Injectable()
export class AgentRunModel {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
  ) {}

  async choose(input: {
    accountId: string;
    project: ProjectRow;
    sessionId: string | null;
    profileId: string | null;
  }): Promise<AgentRunModelChoice> {
    if (input.profileId) return this.profile(input.accountId, input.profileId);
    const warnings: EffectiveConfigWarning[] = [];
    const entries = [
      envEntry(this.config),
      ...(await loadBindingEntries(this.db, this.box, input.accountId, input.sessionId, warnings)),
    ];
    const override = await loadOverrideEntry(this.db, this.box, input.project, warnings);
    if (override) entries.push(override);
    const { layer, profile, apiKey, rawParams } = pickEntry(AGENT_RUN_MODEL_SLOT, entries);
    if (profile?.status === 'disabled')
      throw fatal(
        'instance_slot_disabled_required',
        `The ${AGENT_RUN_MODEL_SLOT} slot is bound to a disabled LLM profile`,
      );
    if (!layer.provider || !layer.model_id)
      throw fatal(
        'model_not_configured',
        'No model is configured for this agent: set its llm_profile_id, bind an LLM profile or set LLM_PROVIDER and LLM_MODEL',
      );
    return {
      target: {
        provider: layer.provider as ProviderKind,
        model: layer.model_id,
        baseUrl: layer.base_url,
        apiKey,
      },
      params: mergeTurnParams(null, rawParams) as LlmParams,
      source: layer.source,
      profile_id: layer.profile_id,
    };
  }

  private async profile(accountId: string, profileId: string): Promise<AgentRunModelChoice> {
    const profile = await llmProfilesRepository.findUsableProfile(this.db, accountId, profileId);
    if (!profile) throw fatal('profile_not_found', `The agent's LLM profile ${profileId} does not exist`);
    if (profile.status === 'disabled')
      throw fatal('profile_disabled', `The agent's LLM profile ${profileId} is disabled`);
    let apiKey: string;
    try {
      apiKey = readKey(this.box, profile);
    } catch (error) {
      if (error instanceof DomainError) throw fatal(error.code, error.message);
      throw error;
    }
    return {
      target: { provider: profile.provider, model: profile.model_id, baseUrl: profile.base_url, apiKey },
      params: {},
      source: 'agent_profile',
      profile_id: profile.id,
    };
  }

  /** One non-streamed call; no SDK retries (the job ledger retries the attempt). */
  async call(choice: AgentRunModelChoice, messages: LlmMessage[], signal: AbortSignal): Promise<LlmResult> {
    try {
      return await this.llm.generate({
        target: choice.target,
        messages,
        params: {
          ...choice.params,
          timeout_ms: choice.params.timeout_ms ?? AGENT_RUN_MODEL_TIMEOUT_MS,
          max_retries: 0,
        },
        stream: false,
        signal,
      });
    } catch (error) {
      const described = generationError(error, null);
      throw new JobFailure(described.message, described.code, providerErrorClass(error));
    }
  }
}

/** Whether trying the same call again may succeed. */
export function providerErrorClass(error: unknown): JobErrorClass {
  if (!(error instanceof LlmError)) return error instanceof DomainError ? 'fatal' : 'retryable';
  switch (error.kind) {
    case 'upstream_status': {
      const status = error.upstreamStatus ?? 500;
      return status >= 500 || status === 408 || status === 429 ? 'retryable' : 'fatal';
    }
    case 'configuration':
      return 'fatal';
    case 'network':
      return findSsrfBlocked(error) ? 'fatal' : 'retryable';
    default:
      // timeout, aborted (lease lost, shutdown), invalid_response
      return 'retryable';
  }
}
