import type { PromptPolicy } from './policy';

/**
 * The structure and delivery sections of the policy applied to assembled messages (spec 2 "Prompt
 * runtime policy"; docs/decisions.md "Prompt engine: policy"). The default mode leaves ST's assembly
 * untouched.
 */
export interface StructuredMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

export interface StructureTrace {
  mode: PromptPolicy['structure']['mode'];
  merged_count: number;
  rewritten_assistant_count: number;
  rewritten_system_count: number;
  placeholder_inserted: boolean;
  transcriptized: boolean;
  transcript_message_count: number;
  assistant_prefill_transcriptized: boolean;
  /** `transcript_append` when a trailing assistant prefill was folded into the last user message. */
  assistant_prefill_strategy: 'transcript_append' | null;
}

export interface StructureInput {
  messages: StructuredMessage[];
  policy: PromptPolicy;
  user_name: string;
  char_name: string;
  /** Whether the last message is an assistant prefill added by assembly. */
  ends_with_prefill: boolean;
}

const PLACEHOLDER = '[Start a new Chat]';

function mergeAdjacent(messages: StructuredMessage[]): { messages: StructuredMessage[]; merged: number } {
  const out: StructuredMessage[] = [];
  let merged = 0;
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role && !last.name && !m.name) {
      last.content = `${last.content}\n\n${m.content}`;
      merged++;
    } else {
      out.push({ ...m });
    }
  }
  return { messages: out, merged };
}

function speaker(m: StructuredMessage, input: StructureInput): string {
  if (m.role === 'assistant') return input.char_name;
  if (m.role === 'user') return input.user_name;
  return '';
}

export function applyStructure(input: StructureInput): {
  messages: StructuredMessage[];
  trace: StructureTrace;
} {
  const { policy } = input;
  const trace: StructureTrace = {
    mode: policy.structure.mode,
    merged_count: 0,
    rewritten_assistant_count: 0,
    rewritten_system_count: 0,
    placeholder_inserted: false,
    transcriptized: false,
    transcript_message_count: 0,
    assistant_prefill_transcriptized: false,
    assistant_prefill_strategy: null,
  };
  let messages = input.messages.map((m) => ({ ...m }));
  let prefill: StructuredMessage | null = null;
  if (input.ends_with_prefill && messages.at(-1)?.role === 'assistant') prefill = messages.pop() ?? null;

  const leadingSystem = () => {
    const firstOther = messages.findIndex((m) => m.role !== 'system');
    return firstOther < 0 ? messages.length : firstOther;
  };
  const mode = policy.structure.mode;
  const noAssistant = mode === 'no_assistant' || policy.delivery.no_assistant;

  if (mode === 'flattened') {
    const keep = policy.structure.preserve_system_messages ? leadingSystem() : 0;
    const head = messages.slice(0, keep);
    const body = messages.slice(keep);
    const lines = body.map((m) => {
      const who = speaker(m, input);
      return who ? `${who}: ${m.content}` : m.content;
    });
    if (prefill) {
      lines.push(`${input.char_name}: ${prefill.content}`);
      trace.assistant_prefill_transcriptized = true;
      trace.assistant_prefill_strategy = 'transcript_append';
      prefill = null;
    }
    trace.transcriptized = true;
    trace.transcript_message_count = body.length;
    messages = [...head, ...(lines.length ? [{ role: 'user' as const, content: lines.join('\n\n') }] : [])];
  } else {
    if (noAssistant) {
      messages = messages.map((m) => {
        if (m.role !== 'assistant') return m;
        trace.rewritten_assistant_count++;
        return policy.structure.assistant_rewrite_strategy === 'to_user_transcript'
          ? { role: 'user' as const, content: `${input.char_name}: ${m.content}` }
          : { role: 'system' as const, content: m.content };
      });
    }
    if (mode === 'strict_alternating') {
      const keep = policy.structure.preserve_system_messages ? leadingSystem() : 0;
      messages = messages.map((m, i) => {
        if (m.role !== 'system' || i < keep) return m;
        trace.rewritten_system_count++;
        return { role: 'user' as const, content: m.content };
      });
      const first = messages.findIndex((m) => m.role !== 'system');
      if (first >= 0 && messages[first].role === 'assistant') {
        messages.splice(first, 0, { role: 'user', content: PLACEHOLDER });
        trace.placeholder_inserted = true;
      }
      const names = messages.map(({ role, content }) => ({ role, content }));
      const merged = mergeAdjacent(names);
      messages = merged.messages;
      trace.merged_count += merged.merged;
    }
  }

  if (policy.structure.merge_adjacent_same_role && mode !== 'strict_alternating') {
    const merged = mergeAdjacent(messages);
    messages = merged.messages;
    trace.merged_count += merged.merged;
  }

  if (prefill) {
    const allowed =
      policy.delivery.allow_assistant_prefill && !noAssistant && !policy.delivery.require_last_user;
    if (allowed) {
      messages.push(prefill);
    } else {
      const last = messages[messages.length - 1];
      const line = `${input.char_name}: ${prefill.content}`;
      if (last && last.role === 'user') last.content = `${last.content}\n\n${line}`;
      else messages.push({ role: 'user', content: line });
      trace.assistant_prefill_transcriptized = true;
      trace.assistant_prefill_strategy = 'transcript_append';
    }
  }

  if (
    policy.delivery.require_last_user &&
    messages.length > 0 &&
    messages[messages.length - 1].role !== 'user'
  ) {
    // Trailing system or assistant messages become the user's turn, so the request ends on a user message.
    const tail: StructuredMessage[] = [];
    while (messages.length > 0 && messages[messages.length - 1].role !== 'user')
      tail.unshift(messages.pop()!);
    const text = tail
      .map((m) => (m.role === 'assistant' ? `${input.char_name}: ${m.content}` : m.content))
      .join('\n\n');
    const last = messages[messages.length - 1];
    if (last && last.role === 'user') last.content = `${last.content}\n\n${text}`;
    else messages.push({ role: 'user', content: text });
    trace.rewritten_system_count += tail.filter((m) => m.role === 'system').length;
    trace.rewritten_assistant_count += tail.filter((m) => m.role === 'assistant').length;
  }

  return { messages, trace };
}
