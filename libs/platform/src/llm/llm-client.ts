import { generateAnthropic, listAnthropicModels } from './anthropic-adapter';
import { generateGemini, listGeminiModels } from './gemini-adapter';
import { generateOpenAi, listOpenAiModels } from './openai-adapter';
import { PROVIDER_PROTOCOL, type LlmClient, type LlmRequest, type LlmTarget } from './llm.types';

/**
 * The one LLM client: picks the adapter by the provider's wire protocol. `fetch` is the HTTP layer every
 * SDK gets (issue 6 passes the network guard's); without it the platform fetch is used.
 */
export function createLlmClient(options: { fetch?: typeof fetch } = {}): LlmClient {
  return {
    generate(request: LlmRequest) {
      switch (PROVIDER_PROTOCOL[request.target.provider]) {
        case 'anthropic':
          return generateAnthropic(request, options.fetch);
        case 'gemini':
          return generateGemini(request, options.fetch);
        default:
          return generateOpenAi(request, options.fetch);
      }
    },
    listModels(target: LlmTarget, signal?: AbortSignal) {
      switch (PROVIDER_PROTOCOL[target.provider]) {
        case 'anthropic':
          return listAnthropicModels(target, options.fetch, signal);
        case 'gemini':
          return listGeminiModels(target, options.fetch, signal);
        default:
          return listOpenAiModels(target, options.fetch, signal);
      }
    },
  };
}
