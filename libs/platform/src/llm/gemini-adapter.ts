import { GoogleGenAI } from '@google/genai';
import { callSignal, toLlmError } from './llm-errors';
import { mapParams } from './param-mapping';
import {
  LlmError,
  type LlmMessage,
  type LlmModelInfo,
  type LlmRequest,
  type LlmResult,
  type LlmTarget,
} from './llm.types';
import { cachedSdkClient, sdkClientKey } from './sdk-clients';

type Fetch = typeof fetch;

/**
 * The Gemini SDK adds Node's global undici dispatcher to its requests; Hearth passes its own fetch (the
 * network guard's, or this plain one), which ignores that field.
 */
const plainFetch: Fetch = ((input: Parameters<Fetch>[0], init?: RequestInit & { dispatcher?: unknown }) => {
  const { dispatcher: _ignored, ...rest } = init ?? {};
  return fetch(input, rest);
}) as Fetch;

function client(target: LlmTarget, fetchFn: Fetch | undefined): GoogleGenAI {
  const apiKey = target.apiKey ?? 'none';
  return cachedSdkClient(
    fetchFn,
    sdkClientKey('google', target.baseUrl, apiKey),
    () =>
      new GoogleGenAI({
        apiKey,
        httpOptions: { ...(target.baseUrl ? { baseUrl: target.baseUrl } : {}), fetch: fetchFn ?? plainFetch },
      }),
  );
}

/** System messages become `systemInstruction`; turns become `user`/`model` contents, adjacent ones merged. */
export function toGeminiContents(messages: LlmMessage[]) {
  const system: string[] = [];
  const contents: Array<{ role: 'user' | 'model'; parts: Array<{ text: string }> }> = [];
  let sawTurn = false;
  for (const m of messages) {
    if (m.role === 'system' && !sawTurn) {
      system.push(m.content);
      continue;
    }
    sawTurn = true;
    const role = m.role === 'assistant' ? 'model' : 'user';
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push({ text: m.content });
    else contents.push({ role, parts: [{ text: m.content }] });
  }
  return { systemInstruction: system.length ? system.join('\n\n') : undefined, contents };
}

export async function generateGemini(request: LlmRequest, fetchFn?: Fetch): Promise<LlmResult> {
  const { target, params } = request;
  const mapped = mapParams('google', params);
  const call = callSignal(request.signal, params.timeout_ms);
  try {
    const ai = client(target, fetchFn);
    const { systemInstruction, contents } = toGeminiContents(request.messages);
    const config = {
      ...mapped.fields,
      ...(systemInstruction ? { systemInstruction } : {}),
      abortSignal: call.signal,
    };
    let text = '';
    let reasoning = '';
    let usage: LlmResult['usage'] = null;
    let finish: string | null = null;
    const read = (response: {
      candidates?: Array<{
        content?: { parts?: Array<{ text?: string; thought?: boolean }> };
        finishReason?: string;
      }>;
      usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number };
    }) => {
      const candidate = response.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (!part.text) continue;
        if (part.thought) {
          reasoning += part.text;
          if (request.stream) request.onEvent?.({ type: 'reasoning', text: part.text });
        } else {
          text += part.text;
          if (request.stream) request.onEvent?.({ type: 'text', text: part.text });
        }
      }
      if (candidate?.finishReason) finish = candidate.finishReason;
      if (response.usageMetadata) {
        const p = response.usageMetadata.promptTokenCount ?? 0;
        const c = response.usageMetadata.candidatesTokenCount ?? 0;
        usage = {
          prompt_tokens: p,
          completion_tokens: c,
          total_tokens: response.usageMetadata.totalTokenCount ?? p + c,
        };
      }
    };
    if (!request.stream) {
      const res = await ai.models.generateContent({ model: target.model, contents, config });
      if (!res || !Array.isArray(res.candidates))
        throw new LlmError('invalid_response', 'The upstream response has no candidates');
      read(res);
    } else {
      const stream = await ai.models.generateContentStream({ model: target.model, contents, config });
      for await (const chunk of stream) read(chunk);
      if (call.aborted) throw new Error('aborted');
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

export async function listGeminiModels(
  target: LlmTarget,
  fetchFn?: Fetch,
  signal?: AbortSignal,
): Promise<LlmModelInfo[]> {
  try {
    const pager = await client(target, fetchFn).models.list({ config: { abortSignal: signal } });
    const out: LlmModelInfo[] = [];
    for await (const model of pager) {
      const id = (model.name ?? '').replace(/^models\//, '');
      if (id) out.push({ id, display_name: model.displayName ?? null });
    }
    return out;
  } catch (error) {
    throw toLlmError(error, { apiKey: target.apiKey, timedOut: false, aborted: signal?.aborted ?? false });
  }
}
