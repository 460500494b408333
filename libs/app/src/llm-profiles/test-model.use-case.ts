import { Inject, Injectable } from '@nestjs/common';
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

export const MODEL_TEST_TEXT = 'This is a connection test. Reply with one short sentence.';
export const MODEL_TEST_TIMEOUT_MS = 60_000;

export interface TestModelInput extends ModelProbeInput {
  reasoning_effort?: string;
}

/**
 * `POST /llm-profiles/models/test`: one short, non-streamed message through the guarded client; answers
 * `{request_text, response_text}`. With profile_id the model defaults to the stored one. Failures: see
 * `probeFailure`.
 */
@Injectable()
export class TestModelUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
  ) {}

  async execute(
    actor: Actor,
    input: TestModelInput,
  ): Promise<{ request_text: string; response_text: string }> {
    const target = await probeTarget(this.db, this.box, this.config, actor, input, 'model_test');
    try {
      const result = await this.llm.generate({
        target,
        messages: [{ role: 'user', content: MODEL_TEST_TEXT }],
        params: {
          timeout_ms: MODEL_TEST_TIMEOUT_MS,
          max_retries: 0,
          ...(input.reasoning_effort ? { reasoning_effort: input.reasoning_effort } : {}),
        },
        stream: false,
      });
      return { request_text: MODEL_TEST_TEXT, response_text: result.text };
    } catch (error) {
      throw probeFailure(error, 'model_test');
    }
  }
}
