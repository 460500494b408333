import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import {
  CONFIG,
  DB,
  LLM_CLIENT,
  SECRET_BOX,
  type AppConfig,
  type LlmClient,
  type SecretBox,
} from '@hearth/platform';
import { probeFailure, probeTarget, type ModelProbeInput } from './model-probe';

export const DISCOVERY_TIMEOUT_MS = 30_000;

/**
 * `POST /llm-profiles/models/discover`: the provider's model list through the guarded client, as
 * `[{id, label}]` (label: the provider's display name, else the id). Failures: see `probeFailure`.
 */
@Injectable()
export class DiscoverModelsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
  ) {}

  async execute(actor: Actor, input: ModelProbeInput): Promise<Array<{ id: string; label: string }>> {
    const target = await probeTarget(this.db, this.box, this.config, actor, input, 'model_discovery');
    try {
      const models = await this.llm.listModels(target, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS));
      if (!Array.isArray(models) || models.some((m) => typeof m?.id !== 'string'))
        throw new DomainError(
          'model_discovery_invalid_response',
          502,
          'Model discovery failed: the upstream answer could not be read',
        );
      return models.map((m) => ({ id: m.id, label: m.display_name || m.id }));
    } catch (error) {
      throw probeFailure(error, 'model_discovery');
    }
  }
}
