/**
 * One provider interface for every wire protocol (ARCHITECTURE.md "libs/platform/llm"): the conversation
 * runtime hands over messages, parameters and an abort signal; an adapter speaks OpenAI Chat Completions
 * (`openai`, `deepseek`, `xai`, `openai-compatible`), Anthropic Messages (`anthropic`) or Gemini
 * (`google`) through the provider's own SDK. Plain API keys never leave the adapter: errors carry the
 * upstream status and a message with every key removed.
 */
export type ProviderKind = 'openai' | 'deepseek' | 'xai' | 'openai-compatible' | 'anthropic' | 'google';
export type WireProtocol = 'openai' | 'anthropic' | 'gemini';

export const PROVIDER_PROTOCOL: Record<ProviderKind, WireProtocol> = {
  openai: 'openai',
  deepseek: 'openai',
  xai: 'openai',
  'openai-compatible': 'openai',
  anthropic: 'anthropic',
  google: 'gemini',
};

export const DEFAULT_BASE_URLS: Record<ProviderKind, string | null> = {
  openai: 'https://api.openai.com/v1',
  deepseek: 'https://api.deepseek.com',
  xai: 'https://api.x.ai/v1',
  'openai-compatible': null,
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
};

export interface LlmTarget {
  provider: ProviderKind;
  model: string;
  /** null: the provider's default (required for `openai-compatible`). */
  baseUrl: string | null;
  apiKey: string | null;
}

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

/** Generation parameters as Hearth names them (spec 2 GenerationParams and binding params). */
export interface LlmParams {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  max_output_tokens?: number | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  reasoning_effort?: string | null;
  stop?: string[] | null;
  /** Upstream timeout for the whole call; 504 `generation_timeout` when it passes. */
  timeout_ms?: number | null;
  max_retries?: number | null;
}

export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type LlmStreamEvent = { type: 'text'; text: string } | { type: 'reasoning'; text: string };

export interface LlmRequest {
  target: LlmTarget;
  messages: LlmMessage[];
  params: LlmParams;
  stream: boolean;
  signal?: AbortSignal;
  /** Called for every increment while streaming (text and reasoning), in order. */
  onEvent?: (event: LlmStreamEvent) => void;
}

export interface LlmResult {
  text: string;
  reasoning_text: string | null;
  usage: LlmUsage | null;
  finish_reason: string | null;
  /** Parameters given but not sent, because this provider has no such parameter. */
  unsupported_params: string[];
  /** What was sent as parameters, for the trace. */
  sent_params: Record<string, unknown>;
}

export type LlmErrorKind =
  'timeout' | 'aborted' | 'upstream_status' | 'invalid_response' | 'network' | 'configuration';

/** A provider failure with everything secret removed from its message. */
export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly upstreamStatus: number | null = null,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export interface LlmModelInfo {
  id: string;
  display_name: string | null;
}

export interface LlmClient {
  generate(request: LlmRequest): Promise<LlmResult>;
  listModels(target: LlmTarget, signal?: AbortSignal): Promise<LlmModelInfo[]>;
}
