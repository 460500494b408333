import OpenAI from 'openai';
import { callSignal, toLlmError } from './llm-errors';
import { mapParams } from './param-mapping';
import { cachedSdkClient, sdkClientKey } from './sdk-clients';
import {
  DEFAULT_BASE_URLS,
  LlmError,
  type LlmModelInfo,
  type LlmRequest,
  type LlmResult,
  type LlmTarget,
} from './llm.types';

type Fetch = typeof fetch;

function client(target: LlmTarget, fetchFn: Fetch | undefined, maxRetries: number): OpenAI {
  const baseURL = target.baseUrl ?? DEFAULT_BASE_URLS[target.provider];
  if (!baseURL) throw new LlmError('configuration', `Provider ${target.provider} needs a base URL`);
  const apiKey = target.apiKey ?? 'none';
  return cachedSdkClient(
    fetchFn,
    sdkClientKey('openai', baseURL, apiKey, maxRetries),
    () => new OpenAI({ apiKey, baseURL, maxRetries, ...(fetchFn ? { fetch: fetchFn } : {}) }),
  );
}

/** OpenAI Chat Completions (and DeepSeek, xAI, compatible servers) through the `openai` package. */
export async function generateOpenAi(request: LlmRequest, fetchFn?: Fetch): Promise<LlmResult> {
  const { target, params } = request;
  const mapped = mapParams(target.provider, params);
  const call = callSignal(request.signal, params.timeout_ms);
  try {
    const api = client(target, fetchFn, params.max_retries ?? 0);
    const body = {
      model: target.model,
      messages: request.messages.map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.name ? { name: m.name } : {}),
      })),
      ...mapped.fields,
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    if (!request.stream) {
      const res = await api.chat.completions.create(body, { signal: call.signal });
      const choice = res.choices?.[0];
      if (!choice || !choice.message)
        throw new LlmError('invalid_response', 'The upstream response has no choices');
      const message = choice.message as {
        content?: string | null;
        reasoning_content?: string | null;
        reasoning?: string | null;
      };
      return {
        text: message.content ?? '',
        reasoning_text: message.reasoning_content ?? message.reasoning ?? null,
        usage: res.usage
          ? {
              prompt_tokens: res.usage.prompt_tokens,
              completion_tokens: res.usage.completion_tokens,
              total_tokens: res.usage.total_tokens,
            }
          : null,
        finish_reason: choice.finish_reason ?? null,
        unsupported_params: mapped.unsupported,
        sent_params: mapped.fields,
      };
    }
    const stream = await api.chat.completions.create(
      {
        ...body,
        stream: true,
        stream_options: { include_usage: true },
      } as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
      { signal: call.signal },
    );
    let text = '';
    let reasoning = '';
    let usage: LlmResult['usage'] = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices?.[0];
      const delta = choice?.delta as
        { content?: string | null; reasoning_content?: string | null; reasoning?: string | null } | undefined;
      const r = delta?.reasoning_content ?? delta?.reasoning;
      if (r) {
        reasoning += r;
        request.onEvent?.({ type: 'reasoning', text: r });
      }
      if (delta?.content) {
        text += delta.content;
        request.onEvent?.({ type: 'text', text: delta.content });
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage)
        usage = {
          prompt_tokens: chunk.usage.prompt_tokens,
          completion_tokens: chunk.usage.completion_tokens,
          total_tokens: chunk.usage.total_tokens,
        };
    }
    if (call.aborted) throw new Error('aborted');
    return {
      text,
      reasoning_text: reasoning || null,
      usage,
      finish_reason: finish,
      unsupported_params: mapped.unsupported,
      sent_params: mapped.fields,
    };
  } catch (error) {
    throw toLlmError(error, { apiKey: target.apiKey, timedOut: call.timedOut, aborted: call.aborted });
  } finally {
    call.dispose();
  }
}

export async function listOpenAiModels(
  target: LlmTarget,
  fetchFn?: Fetch,
  signal?: AbortSignal,
): Promise<LlmModelInfo[]> {
  try {
    const page = await client(target, fetchFn, 0).models.list({ signal });
    const out: LlmModelInfo[] = [];
    for await (const model of page) out.push({ id: model.id, display_name: null });
    return out;
  } catch (error) {
    throw toLlmError(error, { apiKey: target.apiKey, timedOut: false, aborted: signal?.aborted ?? false });
  }
}
