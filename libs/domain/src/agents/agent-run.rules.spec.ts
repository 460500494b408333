import {
  AGENT_RUN_OUTPUT_VIEW_MAX_BYTES,
  agentInstructions,
  agentWriteNames,
  candidateMessages,
  DEFAULT_AGENT_INSTRUCTIONS,
  PAGE_CANDIDATE_MAX_MESSAGES,
  jsonByteCount,
  parseAgentReply,
  planAgentDelivery,
  readAgentRunPayload,
  truncatedView,
} from './agent-run.rules';

describe('agent run rules', () => {
  it('parses a reply as JSON, else its fenced block, else keeps it as text', () => {
    expect(parseAgentReply(' {"mood": "calm", "n": 2} ')).toEqual({ mood: 'calm', n: 2 });
    expect(parseAgentReply('[1, 2]')).toEqual([1, 2]);
    expect(parseAgentReply('Here it is:\n```json\n{"a": [1]}\n```\nDone.')).toEqual({ a: [1] });
    expect(parseAgentReply('```\n{"plain": true}\n```')).toEqual({ plain: true });
    expect(parseAgentReply('no json here')).toEqual({ text: 'no json here' });
    expect(parseAgentReply('```json\n{broken\n```')).toEqual({ text: '```json\n{broken\n```' });
    expect(parseAgentReply('')).toEqual({ text: '' });
  });

  it('replaces unpaired surrogates (which jsonb refuses) with U+FFFD, keeping pairs', () => {
    expect(parseAgentReply('{"note": "half \\ud83d", "\\ude00": ["ok \\ud83d\\ude00"]}')).toEqual({
      note: 'half \ufffd',
      '\ufffd': ['ok \ud83d\ude00'],
    });
    expect(parseAgentReply('```json\n["\\udc00"]\n```')).toEqual(['\ufffd']);
    expect(parseAgentReply('text \ud800')).toEqual({ text: 'text \ufffd' });
    expect(parseAgentReply('{"__proto__": {"x": 1}}')).toEqual(JSON.parse('{"__proto__": {"x": 1}}'));
  });

  it('keeps an output of 16 KiB whole and truncates one past it on a character boundary', () => {
    // JSON of a string is the string plus two quotes.
    const atLimit = 'a'.repeat(AGENT_RUN_OUTPUT_VIEW_MAX_BYTES - 2);
    expect(jsonByteCount(atLimit)).toBe(AGENT_RUN_OUTPUT_VIEW_MAX_BYTES);
    expect(truncatedView(atLimit)).toBe(atLimit);

    const past = 'a'.repeat(AGENT_RUN_OUTPUT_VIEW_MAX_BYTES - 1);
    const view = truncatedView(past) as { truncated: boolean; byte_count: number; preview: string };
    expect(view).toMatchObject({ truncated: true, byte_count: AGENT_RUN_OUTPUT_VIEW_MAX_BYTES + 1 });
    expect(view.preview).toBe(`"${'a'.repeat(AGENT_RUN_OUTPUT_VIEW_MAX_BYTES - 1)}`);

    // A 3-byte character straddling the limit is left out whole.
    const wide = { text: '€'.repeat(6000) };
    const wideView = truncatedView(wide, 100) as { preview: string };
    expect(new TextEncoder().encode(wideView.preview).length).toBeLessThanOrEqual(100);
    expect(wideView.preview).not.toContain('\uFFFD');
    expect(wideView.preview.startsWith('{"text":"€')).toBe(true);
  });

  it('writes the declared targets still allowed that this build supports, and says why it skips the others', () => {
    expect(
      planAgentDelivery(
        ['project_inbox', 'derived_output', 'client_data', 'page_staged_write'],
        ['derived_output', 'project_inbox', 'client_data'],
      ),
    ).toEqual({
      // Derived output first, so the inbox entry can point at it.
      write: ['derived_output', 'project_inbox'],
      skipped: [
        { target: 'client_data', reason: 'not_supported' },
        { target: 'page_staged_write', reason: 'not_allowed' },
      ],
    });
    expect(
      planAgentDelivery(
        ['page_staged_write', 'session_state_proposal', 'plugin_data', 'derived_output'],
        ['page_staged_write', 'session_state_proposal', 'plugin_data', 'derived_output'],
      ),
    ).toEqual({
      write: ['derived_output', 'page_staged_write'],
      skipped: [
        { target: 'session_state_proposal', reason: 'not_supported' },
        { target: 'plugin_data', reason: 'not_supported' },
      ],
    });
    // Withdrawn from the grants since the job was created: not written.
    expect(planAgentDelivery(['derived_output'], [])).toEqual({
      write: [],
      skipped: [{ target: 'derived_output', reason: 'not_allowed' }],
    });
    // Allowed but not declared by the job: not written either.
    expect(planAgentDelivery([], ['derived_output'])).toEqual({ write: [], skipped: [] });
  });

  it('names the writes from the metadata or the Agent Type', () => {
    const type = { key: 'summariser', name: 'Summariser' };
    expect(agentWriteNames({}, type)).toEqual({
      domain: 'agent.summariser',
      status: 'published',
      inboxKind: 'agent.summariser',
      inboxTitle: 'Summariser',
      stagedWriteReason: 'agent.summariser',
    });
    expect(
      agentWriteNames(
        {
          output_domain: 'mood',
          output_status: 'draft',
          inbox_kind: 'review',
          inbox_title: 'Check this',
          staged_write_reason: 'Tighter prose',
        },
        type,
      ),
    ).toEqual({
      domain: 'mood',
      status: 'draft',
      inboxKind: 'review',
      inboxTitle: 'Check this',
      stagedWriteReason: 'Tighter prose',
    });
    expect(agentWriteNames({ staged_write_reason: 'r'.repeat(2000) }, type).stagedWriteReason).toHaveLength(
      2000,
    );
    expect(agentWriteNames({ staged_write_reason: 'r'.repeat(2001) }, type).stagedWriteReason).toBe(
      'agent.summariser',
    );
    // Invalid values fall back: empty, too long, not a string, unknown status.
    expect(
      agentWriteNames(
        { output_domain: '', output_status: 'archived', inbox_kind: 'k'.repeat(129), inbox_title: 7 },
        type,
      ),
    ).toEqual(agentWriteNames({}, type));
    expect(agentWriteNames({ output_domain: 'd'.repeat(128) }, type).domain).toHaveLength(128);
    expect(agentWriteNames({}, { key: 'k'.repeat(120), name: 'n' }).domain).toBe(`agent.${'k'.repeat(120)}`);
  });

  it("makes a page candidate's messages from the output", () => {
    const messages = [
      { role: 'assistant', content: 'A rewrite.' },
      { role: 'user', content: 'And a question?' },
    ];
    expect(candidateMessages({ messages, other: 1 })).toEqual(messages);
    expect(candidateMessages({ text: 'plain reply' })).toEqual([
      { role: 'assistant', content: 'plain reply' },
    ]);
    expect(candidateMessages({ content: 'c' })).toEqual([{ role: 'assistant', content: 'c' }]);
    expect(candidateMessages('s')).toEqual([{ role: 'assistant', content: 's' }]);
    expect(candidateMessages([1, 2])).toEqual([{ role: 'assistant', content: '[1,2]' }]);
    expect(candidateMessages({ mood: 'calm' })).toEqual([{ role: 'assistant', content: '{"mood":"calm"}' }]);
    // Messages that are not all well-formed are not used as messages: the output is kept as JSON text.
    const badRole = { messages: [{ role: 'tool', content: 'x' }] };
    expect(candidateMessages(badRole)).toEqual([{ role: 'assistant', content: JSON.stringify(badRole) }]);
    expect(candidateMessages({ messages: [], text: 't' })).toEqual([{ role: 'assistant', content: 't' }]);
    const atLimit = Array.from({ length: PAGE_CANDIDATE_MAX_MESSAGES }, () => messages[0]);
    expect(candidateMessages({ messages: atLimit })).toHaveLength(PAGE_CANDIDATE_MAX_MESSAGES);
    expect(candidateMessages({ messages: [...atLimit, messages[0]] })).toHaveLength(1);
    // Text Postgres cannot store becomes U+FFFD.
    expect(candidateMessages({ text: 'a\u0000b' })).toEqual([{ role: 'assistant', content: 'a\ufffdb' }]);
  });

  it('reads the job payload defensively and picks the instructions', () => {
    expect(readAgentRunPayload(null)).toEqual({
      input_json: {},
      trigger_reason: null,
      session_id: null,
      floor_id: null,
    });
    expect(
      readAgentRunPayload({
        input_json: { a: 1 },
        trigger_reason: 'event:floor.committed',
        session_id: 'ses_1',
        floor_id: 'flr_1',
      }),
    ).toEqual({
      input_json: { a: 1 },
      trigger_reason: 'event:floor.committed',
      session_id: 'ses_1',
      floor_id: 'flr_1',
    });
    expect(readAgentRunPayload({ input_json: [1], session_id: 3 }).input_json).toEqual({});
    expect(agentInstructions({ instructions: 'Summarise.' })).toBe('Summarise.');
    expect(agentInstructions({ instructions: '  ' })).toBe(DEFAULT_AGENT_INSTRUCTIONS);
    expect(agentInstructions({})).toBe(DEFAULT_AGENT_INSTRUCTIONS);
  });
});
