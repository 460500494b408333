import Anthropic from '@anthropic-ai/sdk';
import { callSignal, toLlmError } from './llm-errors';
import { mapParams } from './param-mapping';
import {
  DEFAULT_BASE_URLS,
  LlmError,
  type LlmMessage,
  type LlmModelInfo,
  type LlmRequest,
  type LlmResult,
  type LlmTarget,
} from './llm.types';
import { cachedSdkClient, sdkClientKey } from './sdk-clients';

type Fetch = typeof fetch;

function client(target: LlmTarget, fetchFn: Fetch | undefined, maxRetries: number): Anthropic {
  const apiKey = target.apiKey ?? 'none';
  const baseURL = target.baseUrl ?? DEFAULT_BASE_URLS.anthropic ?? undefined;
  return cachedSdkClient(
    fetchFn,
    sdkClientKey('anthropic', baseURL, apiKey, maxRetries),
    () => new Anthropic({ apiKey, baseURL, maxRetries, ...(fetchFn ? { fetch: fetchFn } : {}) }),
  );
}

/**
 * The Messages API takes system text apart from the turns, and turns must start with `user`: system
 * messages are joined into `system`; adjacent turns of one role are merged; a conversation that would
 * start with the assistant gets an empty-content-free user turn `[Start]` in front.
 */
export function toAnthropicMessages(messages: LlmMessage[]): {
  system: string | undefined;
  turns: Array<{ role: 'user' | 'assistant'; content: string }>;
} {
  const system: string[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  let sawTurn = false;
  for (const m of messages) {
    if (m.role === 'system' && !sawTurn) {
      system.push(m.content);
      continue;
    }
    sawTurn = true;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content = `${last.content}\n\n${m.content}`;
    else turns.push({ role, content: m.content });
  }
  if (turns.length === 0 || turns[0].role !== 'user') turns.unshift({ role: 'user', content: '[Start]' });
  return { system: system.length ? system.join('\n\n') : undefined, turns };
}

export async function generateAnthropic(request: LlmRequest, fetchFn?: Fetch): Promise<LlmResult> {
  const { target, params } = request;
  const mapped = mapParams('anthropic', params);
  const call = callSignal(request.signal, params.timeout_ms);
  try {
    const api = client(target, fetchFn, params.max_retries ?? 0);
    const { system, turns } = toAnthropicMessages(request.messages);
    const body = {
      model: target.model,
      messages: turns,
      ...(system ? { system } : {}),
      ...mapped.fields,
    } as Anthropic.MessageCreateParamsNonStreaming;
    let text = '';
    let reasoning = '';
    let usage: LlmResult['usage'] = null;
    let finish: string | null = null;
    if (!request.stream) {
      const res = await api.messages.create(body, { signal: call.signal });
      if (!Array.isArray(res.content))
        throw new LlmError('invalid_response', 'The upstream response has no content');
      for (const block of res.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'thinking') reasoning += block.thinking;
      }
      usage = res.usage
        ? {
            prompt_tokens: res.usage.input_tokens,
            completion_tokens: res.usage.output_tokens,
            total_tokens: res.usage.input_tokens + res.usage.output_tokens,
          }
        : null;
      finish = res.stop_reason ?? null;
    } else {
      const stream = await api.messages.create(
        { ...body, stream: true } as Anthropic.MessageCreateParamsStreaming,
        { signal: call.signal },
      );
      let input = 0;
      let output = 0;
      for await (const event of stream) {
        if (event.type === 'message_start') input = event.message.usage?.input_tokens ?? 0;
        else if (event.type === 'content_block_delta') {
          if (event.delta.type === 'text_delta') {
            text += event.delta.text;
            request.onEvent?.({ type: 'text', text: event.delta.text });
          } else if (event.delta.type === 'thinking_delta') {
            reasoning += event.delta.thinking;
            request.onEvent?.({ type: 'reasoning', text: event.delta.thinking });
          }
        } else if (event.type === 'message_delta') {
          output = event.usage?.output_tokens ?? output;
          finish = event.delta.stop_reason ?? finish;
        }
      }
      if (call.aborted) throw new Error('aborted');
      usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
    }
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

export async function listAnthropicModels(
  target: LlmTarget,
  fetchFn?: Fetch,
  signal?: AbortSignal,
): Promise<LlmModelInfo[]> {
  try {
    const out: LlmModelInfo[] = [];
    for await (const model of client(target, fetchFn, 0).models.list({}, { signal })) {
      out.push({ id: model.id, display_name: model.display_name ?? null });
    }
    return out;
  } catch (error) {
    throw toLlmError(error, { apiKey: target.apiKey, timedOut: false, aborted: signal?.aborted ?? false });
  }
}
