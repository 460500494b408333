import { DomainError, type LlmProviderName } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { llmProfilesRepository, type Executor } from '@hearth/persistence';
import {
  findSsrfBlocked,
  LlmError,
  validateBaseUrl,
  type AppConfig,
  type LlmTarget,
  type SecretBox,
} from '@hearth/platform';
import { invalidRequest, profileNotFound, readKey } from './llm-profile-rules';

/** The body shared by `models/discover` and `models/test`. */
export interface ModelProbeInput {
  profile_id?: string;
  provider?: LlmProviderName;
  model_id?: string;
  api_key?: string;
  base_url?: string | null;
  allow_private_network?: boolean;
}

export type ProbeKind = 'model_discovery' | 'model_test';

/**
 * The target a discover or test call reaches: a stored profile (its key decrypted: 500
 * `secret_invalid_format` when it cannot be), with body fields taking precedence, or the body alone
 * (provider and api_key, and model_id for a test, else 400 `invalid_request`). `base_url` passes the
 * write-time guard; the connection itself goes through the guarded client. `allow_private_network`
 * cannot lift the guard: private addresses are reachable only when the server sets
 * ALLOW_PRIVATE_BASE_URL=true (otherwise 400 `ssrf_blocked`, whatever the flag says).
 */
export async function probeTarget(
  db: Executor,
  box: SecretBox,
  config: AppConfig,
  actor: Actor,
  input: ModelProbeInput,
  kind: ProbeKind,
): Promise<LlmTarget> {
  if (!input.profile_id) {
    const missing = ['provider', 'api_key', ...(kind === 'model_test' ? ['model_id'] : [])].filter(
      (field) => !(input as Record<string, unknown>)[field],
    );
    if (missing.length)
      throw invalidRequest(
        `Without profile_id, ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required`,
        missing,
      );
  }
  let target: LlmTarget;
  if (input.profile_id) {
    const profile = await llmProfilesRepository.findUsableProfile(db, actor.accountId, input.profile_id);
    if (!profile) throw profileNotFound();
    target = {
      provider: input.provider ?? profile.provider,
      model: input.model_id ?? profile.model_id,
      baseUrl: input.base_url === undefined ? profile.base_url : input.base_url,
      apiKey: input.api_key ?? readKey(box, profile),
    };
  } else {
    target = {
      provider: input.provider!,
      model: input.model_id ?? '',
      baseUrl: input.base_url ?? null,
      apiKey: input.api_key!,
    };
  }
  if (target.baseUrl !== null) validateBaseUrl(target.baseUrl, { allowPrivate: config.allowPrivateBaseUrl });
  else if (target.provider === 'openai-compatible')
    throw invalidRequest('base_url is required for the openai-compatible provider', ['base_url']);
  return target;
}

/**
 * An upstream failure as the profile routes answer it: the guard's refusal stays 400 `ssrf_blocked`;
 * an unreadable answer is 502 `<kind>_invalid_response`; anything else 502 `<kind>_failed`, with the
 * upstream status in the message and details. Messages never carry the key or the upstream's text.
 */
export function probeFailure(error: unknown, kind: ProbeKind): DomainError {
  const ssrf = findSsrfBlocked(error);
  if (ssrf) return ssrf;
  if (error instanceof DomainError) return error;
  const what = kind === 'model_discovery' ? 'Model discovery' : 'The model test';
  if (error instanceof LlmError) {
    switch (error.kind) {
      case 'invalid_response':
        return new DomainError(
          `${kind}_invalid_response`,
          502,
          `${what} failed: the upstream answer could not be read`,
        );
      case 'upstream_status':
        return new DomainError(
          `${kind}_failed`,
          502,
          `${what} failed: the upstream answered ${error.upstreamStatus}`,
          {
            upstream_status: error.upstreamStatus,
          },
        );
      case 'timeout':
        return new DomainError(`${kind}_failed`, 502, `${what} failed: the upstream did not answer in time`);
      case 'configuration':
        return invalidRequest(`${what} failed: the target is not usable (${error.message})`, ['base_url']);
      default:
        return new DomainError(`${kind}_failed`, 502, `${what} failed: the upstream could not be reached`);
    }
  }
  return new DomainError(`${kind}_failed`, 502, `${what} failed`);
}
