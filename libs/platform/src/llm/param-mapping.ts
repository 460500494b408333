import type { LlmParams, ProviderKind } from './llm.types';

/**
 * Hearth's generation parameters mapped onto each provider's request fields; a parameter the provider
 * does not have is reported in `unsupported`, never sent.
 */
export interface MappedParams {
  fields: Record<string, unknown>;
  unsupported: string[];
}

const REASONING_BUDGET: Record<string, number> = { low: 1024, medium: 4096, high: 16384 };

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

export function mapParams(provider: ProviderKind, params: LlmParams): MappedParams {
  const fields: Record<string, unknown> = {};
  const unsupported: string[] = [];
  const take = (name: keyof LlmParams, field: string | null, transform: (v: never) => unknown = (v) => v) => {
    const value = params[name];
    if (!present(value)) return;
    if (field === null) unsupported.push(name);
    else fields[field] = transform(value as never);
  };
  switch (provider) {
    case 'anthropic':
      take('temperature', 'temperature', (v: number) => Math.min(1, v));
      take('top_p', 'top_p');
      take('top_k', 'top_k');
      take('max_output_tokens', 'max_tokens');
      take('frequency_penalty', null);
      take('presence_penalty', null);
      take('stop', 'stop_sequences');
      if (present(params.reasoning_effort)) {
        const budget = REASONING_BUDGET[params.reasoning_effort];
        if (budget) fields.thinking = { type: 'enabled', budget_tokens: budget };
        else unsupported.push('reasoning_effort');
      }
      if (fields.max_tokens === undefined) fields.max_tokens = 1024;
      if (
        fields.thinking &&
        (fields.max_tokens as number) <= (fields.thinking as { budget_tokens: number }).budget_tokens
      )
        fields.max_tokens = (fields.thinking as { budget_tokens: number }).budget_tokens + 1024;
      break;
    case 'google': {
      const config: Record<string, unknown> = {};
      const put = (name: keyof LlmParams, field: string) => {
        if (present(params[name])) config[field] = params[name];
      };
      put('temperature', 'temperature');
      put('top_p', 'topP');
      put('top_k', 'topK');
      put('max_output_tokens', 'maxOutputTokens');
      put('frequency_penalty', 'frequencyPenalty');
      put('presence_penalty', 'presencePenalty');
      put('stop', 'stopSequences');
      if (present(params.reasoning_effort)) {
        const budget = REASONING_BUDGET[params.reasoning_effort];
        if (budget) config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
        else unsupported.push('reasoning_effort');
      }
      Object.assign(fields, config);
      break;
    }
    default: {
      // OpenAI Chat Completions and compatible servers.
      take('temperature', 'temperature');
      take('top_p', 'top_p');
      take('max_output_tokens', 'max_tokens');
      take('frequency_penalty', 'frequency_penalty');
      take('presence_penalty', 'presence_penalty');
      take('stop', 'stop');
      take(
        'reasoning_effort',
        provider === 'openai' || provider === 'openai-compatible' || provider === 'xai'
          ? 'reasoning_effort'
          : null,
      );
      // top_k is not part of the OpenAI protocol; compatible servers accept it as an extra field.
      take('top_k', provider === 'openai-compatible' ? 'top_k' : null);
    }
  }
  return { fields, unsupported };
}
