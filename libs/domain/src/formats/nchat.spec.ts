import { DomainError } from '../errors';
import { parseExtJsonl } from './chat-jsonl';
import { expectParseError, readFixture } from './format.test-support';
import {
  detectChatFormat,
  NCHAT_SPEC,
  NCHAT_SPEC_VERSION,
  NchatFile,
  NchatFloor,
  NchatMessage,
  NchatPage,
  pageChecksum,
  serializeNchat,
} from './nchat';
import { parseNchat } from './nchat-parse';

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

function message(
  id: string,
  seq: number,
  role: NchatMessage['role'],
  content: string,
  more: Partial<NchatMessage> = {},
): NchatMessage {
  return {
    _original_id: id,
    seq,
    role,
    content,
    content_format: 'text',
    is_hidden: false,
    source: role === 'user' ? 'user' : 'model',
    token_count: content.length,
    token_encoding: 'o200k_base',
    created_at: T0 + seq,
    ...more,
  };
}

function page(
  id: string,
  pageNo: number,
  kind: NchatPage['page_kind'],
  active: boolean,
  version: number,
  messages: NchatMessage[],
): NchatPage {
  return {
    _original_id: id,
    page_no: pageNo,
    page_kind: kind,
    is_active: active,
    version,
    checksum: pageChecksum(messages),
    created_at: T0 + pageNo,
    updated_at: T0 + pageNo + 1,
    messages,
  };
}

function floor(
  id: string,
  branch: string,
  floorNo: number,
  parent: string | null,
  line: string,
  pages: NchatPage[],
  more: Partial<NchatFloor> = {},
): NchatFloor {
  return {
    _original_id: id,
    branch_id_ref: branch,
    floor_no: floorNo,
    parent_floor_id_ref: parent,
    line_id_ref: line,
    state: 'committed',
    token_in: 100 * floorNo,
    token_out: 10 * floorNo,
    reasoning_text: null,
    metadata: {},
    state_snapshot: null,
    superseded_at: null,
    superseded_by_floor_id_ref: null,
    created_at: T0 + floorNo * 1000,
    updated_at: T0 + floorNo * 1000 + 1,
    pages,
    ...more,
  };
}

/**
 * A session with two branches: `main` (greeting, floor 1, a floor 2 superseded by a reset and its
 * replacement, a generating floor 3) and `alt`, made from floor 1 (a failed floor 2 on its own line).
 */
function generatedChat(): NchatFile {
  return {
    spec: NCHAT_SPEC,
    spec_version: NCHAT_SPEC_VERSION,
    exported_at: T0 + 99_000,
    export_source: 'api',
    export_app_version: '0.1.0',
    data: {
      title: 'Two branches',
      status: 'active',
      character_binding: { character_id: 'chr_1', character_version_id: 'chv_1', sync_policy: 'pin' },
      branches: [
        {
          _original_id: 'br_main',
          name: 'main',
          source_floor_id_ref: null,
          head_floor_id_ref: 'fl_3',
          created_at: T0,
          updated_at: T0 + 5000,
        },
        {
          _original_id: 'br_alt',
          name: 'alt',
          source_floor_id_ref: 'fl_1',
          head_floor_id_ref: 'fl_2alt',
          created_at: T0 + 3000,
          updated_at: T0 + 3001,
        },
      ],
      lines: [
        {
          _original_id: 'ln_0',
          parent_line_id_ref: null,
          fork_floor_no: null,
          start_floor_no: 0,
          created_at: T0,
        },
        {
          _original_id: 'ln_1',
          parent_line_id_ref: 'ln_0',
          fork_floor_no: 1,
          start_floor_no: 2,
          created_at: T0 + 3000,
        },
        {
          _original_id: 'ln_2',
          parent_line_id_ref: 'ln_0',
          fork_floor_no: 1,
          start_floor_no: 2,
          created_at: T0 + 4000,
        },
      ],
      floors: [
        floor('fl_0', 'br_main', 0, null, 'ln_0', [
          page('pg_0a', 0, 'greeting', true, 1, [message('ms_0a', 0, 'assistant', 'Hello {{user}}')]),
          page('pg_0b', 1, 'greeting', false, 2, [
            message('ms_0b', 0, 'assistant', 'Welcome back, {{user}}'),
          ]),
        ]),
        floor(
          'fl_1',
          'br_main',
          1,
          'fl_0',
          'ln_0',
          [
            page('pg_1in', 0, 'input', true, 1, [message('ms_1in', 0, 'user', 'Hi!')]),
            page('pg_1o1', 1, 'output', false, 1, [message('ms_1o1', 0, 'assistant', 'First try')]),
            page('pg_1o2', 2, 'output', true, 2, [
              message('ms_1o2a', 0, 'tool', '{"roll":4}', { source: 'tool', content_format: 'json' }),
              message('ms_1o2b', 1, 'assistant', 'You rolled 4.', {
                token_count: null,
                token_encoding: null,
              }),
              message('ms_1o2c', 2, 'narrator', 'Thunder rolls.', { is_hidden: true }),
            ]),
          ],
          { reasoning_text: 'thinking…', metadata: { model: 'fake-model', usage: { total_tokens: 110 } } },
        ),
        floor(
          'fl_2',
          'br_main',
          2,
          'fl_1',
          'ln_0',
          [page('pg_2in', 0, 'input', true, 1, [message('ms_2in', 0, 'user', 'Go north')])],
          {
            superseded_at: T0 + 4500,
            superseded_by_floor_id_ref: 'fl_2b',
            state_snapshot: { variables: { x: 1 } },
          },
        ),
        floor('fl_2b', 'br_main', 2, 'fl_1', 'ln_2', [
          page('pg_2bin', 0, 'input', true, 1, [message('ms_2bin', 0, 'user', 'Go south')]),
          page('pg_2bout', 1, 'output', true, 1, [message('ms_2bout', 0, 'assistant', 'South it is.')]),
        ]),
        floor(
          'fl_3',
          'br_main',
          3,
          'fl_2b',
          'ln_2',
          [page('pg_3in', 0, 'input', true, 1, [message('ms_3in', 0, 'user', 'And then?')])],
          { state: 'generating' },
        ),
        floor(
          'fl_2alt',
          'br_alt',
          2,
          'fl_1',
          'ln_1',
          [page('pg_2altin', 0, 'input', true, 1, [message('ms_2altin', 0, 'user', 'Go west')])],
          { state: 'failed', metadata: { error: 'provider_timeout' } },
        ),
      ],
      variables: [
        { scope: 'chat', scope_id_ref: null, key: 'mood', value: 'calm', updated_at: T0 + 10 },
        { scope: 'branch', scope_id_ref: 'br_alt', key: 'path', value: ['west'], updated_at: T0 + 11 },
        { scope: 'floor', scope_id_ref: 'fl_1', key: 'roll', value: 4, updated_at: T0 + 12 },
        {
          scope: 'page',
          scope_id_ref: 'pg_1o2',
          key: 'draft',
          value: { ok: true, n: null },
          updated_at: T0 + 13,
        },
      ],
      memories: {
        items: [
          {
            _original_id: 'mem_1',
            content: 'The user rolled a 4.',
            summary_tier: 'micro',
            lifecycle_status: 'active',
            source_job_id: 'job_9',
            branch_id_ref: 'br_main',
            floor_id_ref: 'fl_1',
            covered_floor_id_refs: ['fl_0', 'fl_1'],
            token_count: 7,
            coverage: { floor_from: 0, floor_to: 1, ratio: 1 },
            created_at: T0 + 20,
            updated_at: T0 + 21,
          },
          {
            _original_id: 'mem_2',
            content: 'They went south.',
            summary_tier: 'macro',
            lifecycle_status: 'superseded',
            source_job_id: null,
            token_count: 4,
            created_at: T0 + 22,
            updated_at: T0 + 23,
          },
          { _original_id: 'mem_3', content: 'Open question resolved.', custom_field: { kept: true } },
        ],
        edges: [
          {
            _original_id: 'edge_1',
            from_item_id_ref: 'mem_2',
            to_item_id_ref: 'mem_1',
            relation_type: 'derived_from',
          },
          {
            from_item_id_ref: 'mem_2',
            to_item_id_ref: 'mem_1',
            relation_type: 'compacts',
            created_at: T0 + 30,
          },
          { from_item_id_ref: 'mem_3', to_item_id_ref: 'mem_1', relation_type: 'resolves', weight: 0.5 },
        ],
      },
    },
  };
}

/** Keys reordered at every level, as a jsonb column or another writer might. */
function shuffled<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .reverse()
          .map((k) => [k, walk((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return walk(JSON.parse(JSON.stringify(value))) as T;
}

/** The generated chat with one change, as file text. */
function mutated(change: (chat: Record<string, any>) => void): string {
  const chat = JSON.parse(JSON.stringify(generatedChat()));
  change(chat);
  return JSON.stringify(chat);
}

function expectDomainError(fn: () => unknown, code: string, status = 400): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DomainError);
  expect({ code: (caught as DomainError).code, status: (caught as DomainError).status }).toEqual({
    code,
    status,
  });
  return caught as DomainError;
}

describe('nchat', () => {
  describe('round trip', () => {
    it('keeps every branch, line, floor, page, message, variable and memory field', () => {
      const chat = generatedChat();
      const parsed = parseNchat(serializeNchat(chat));
      expect(parsed.chat).toEqual(chat);
      expect(parsed.warnings).toEqual([]);
      expect(serializeNchat(parsed.chat)).toBe(serializeNchat(chat));
    });

    it('reads a file whose keys are in another order', () => {
      expect(parseNchat(JSON.stringify(shuffled(generatedChat()))).chat).toEqual(generatedChat());
    });

    it('counts what the file holds', () => {
      expect(parseNchat(serializeNchat(generatedChat())).counts).toEqual({
        branch_count: 2,
        floor_count: 6,
        page_count: 10,
        message_count: 12,
        variable_count: 4,
        memory_item_count: 3,
        memory_edge_count: 3,
      });
    });

    it('keeps the superseded relation, states, token statistics and floor metadata', () => {
      const { floors } = parseNchat(serializeNchat(generatedChat())).chat.data;
      const byId = new Map(floors.map((f) => [f._original_id, f]));
      expect(byId.get('fl_2')).toMatchObject({
        superseded_at: T0 + 4500,
        superseded_by_floor_id_ref: 'fl_2b',
      });
      expect(floors.map((f) => f.state)).toEqual([
        'committed',
        'committed',
        'committed',
        'committed',
        'generating',
        'failed',
      ]);
      expect(byId.get('fl_1')).toMatchObject({
        token_in: 100,
        token_out: 10,
        metadata: { usage: { total_tokens: 110 } },
      });
      expect(byId.get('fl_1')!.pages[2].messages.map((m) => [m.role, m.token_count, m.is_hidden])).toEqual([
        ['tool', 10, false],
        ['assistant', null, false],
        ['narrator', 14, true],
      ]);
    });

    it('makes variables and memories optional', () => {
      const text = mutated((chat) => {
        delete chat.data.variables;
        delete chat.data.memories;
        delete chat.data.lines;
        delete chat.data.character_binding;
        for (const f of chat.data.floors) delete f.line_id_ref;
      });
      const parsed = parseNchat(text);
      expect(parsed.chat.data.variables).toBeUndefined();
      expect(parsed.chat.data.memories).toBeUndefined();
      expect(parsed.chat.data.floors.every((f) => f.line_id_ref === null)).toBe(true);
      expect(parsed.counts).toMatchObject({ variable_count: 0, memory_item_count: 0, memory_edge_count: 0 });
    });

    it('reads missing nullable fields as null and missing metadata as {}', () => {
      const text = mutated((chat) => {
        const f = chat.data.floors[0];
        for (const key of [
          'reasoning_text',
          'metadata',
          'state_snapshot',
          'superseded_at',
          'superseded_by_floor_id_ref',
        ]) {
          delete f[key];
        }
        delete f.pages[0].messages[0].token_count;
        delete f.pages[0].messages[0].content_format;
      });
      const f = parseNchat(text).chat.data.floors[0];
      expect(f).toMatchObject({
        reasoning_text: null,
        metadata: {},
        state_snapshot: null,
        superseded_at: null,
        superseded_by_floor_id_ref: null,
      });
      expect(f.pages[0].messages[0]).toMatchObject({ token_count: null, content_format: 'text' });
    });

    it('keeps a message extra (e.g. an ext_jsonl capture)', () => {
      const st = parseExtJsonl(readFixture('chats', 'MacroMage.swipes.st-1.18.0.jsonl').toString('utf8'), {
        now: T0,
      });
      const extra = st.floors[1].pages[2].messages[0].extra;
      const text = mutated((chat) => (chat.data.floors[0].pages[0].messages[0].extra = extra));
      expect(parseNchat(text).chat.data.floors[0].pages[0].messages[0].extra).toEqual(extra);
    });
  });

  describe('version', () => {
    it.each(['2.0.0', '0.9.0', '10.0'])(
      'rejects spec_version %s with import_unsupported_version',
      (version) => {
        const error = expectDomainError(
          () => parseNchat(mutated((chat) => (chat.spec_version = version))),
          'import_unsupported_version',
        );
        expect(error.details).toEqual({ spec_version: version, supported_major: 1 });
      },
    );

    it.each(['1.0.0', '1', '1.0', '1.0.7'])('accepts spec_version %s without warning', (version) => {
      expect(parseNchat(mutated((chat) => (chat.spec_version = version))).warnings).toEqual([]);
    });

    it('accepts a newer minor version with a warning', () => {
      expect(parseNchat(mutated((chat) => (chat.spec_version = '1.4.0'))).warnings).toEqual([
        'spec_version 1.4.0 is newer than 1.0.0',
      ]);
    });

    it.each([
      ['v1', /\$\.spec_version must be a version/],
      ['1.0.0-beta', /\$\.spec_version must be a version/],
      [1, /\$\.spec_version must be a string/],
      [undefined, /\$\.spec_version must be a string/],
    ])('rejects spec_version %p with import_parse_error', (version, message) => {
      expectParseError(() => parseNchat(mutated((chat) => (chat.spec_version = version))), message);
    });
  });

  describe('shape errors name the path', () => {
    it.each<[string, (chat: Record<string, any>) => void, RegExp]>([
      ['another spec', (c) => (c.spec = 'chara_card_v2'), /^\$\.spec must be "native_chat"/],
      ['no data', (c) => delete c.data, /^\$\.data must be an object/],
      ['no exported_at', (c) => delete c.exported_at, /^\$\.exported_at must be an integer/],
      ['a bad status', (c) => (c.data.status = 'gone'), /^\$\.data\.status must be one of active, archived/],
      ['floors not an array', (c) => (c.data.floors = {}), /^\$\.data\.floors must be an array/],
      [
        'a bad page kind',
        (c) => (c.data.floors[1].pages[0].page_kind = 'swipe'),
        /^\$\.data\.floors\[1\]\.pages\[0\]\.page_kind must be one of/,
      ],
      [
        'a bad role',
        (c) => (c.data.floors[1].pages[2].messages[1].role = 'bot'),
        /^\$\.data\.floors\[1\]\.pages\[2\]\.messages\[1\]\.role/,
      ],
      [
        'content not a string',
        (c) => (c.data.floors[0].pages[0].messages[0].content = 5),
        /messages\[0\]\.content must be a string/,
      ],
      [
        'a bad floor state',
        (c) => (c.data.floors[0].state = 'draft'),
        /^\$\.data\.floors\[0\]\.state must be one of/,
      ],
      [
        'a negative token count',
        (c) => (c.data.floors[0].token_in = -1),
        /^\$\.data\.floors\[0\]\.token_in must be an integer >= 0/,
      ],
      [
        'a version 0',
        (c) => (c.data.floors[0].pages[0].version = 0),
        /pages\[0\]\.version must be an integer >= 1/,
      ],
      [
        'a missing _original_id',
        (c) => delete c.data.floors[0].pages[0]._original_id,
        /pages\[0\]\._original_id must be a non-empty string/,
      ],
      [
        'a repeated floor id',
        (c) => (c.data.floors[1]._original_id = 'fl_0'),
        /^\$\.data\.floors\[1\]\._original_id repeats the floor id fl_0/,
      ],
      [
        'a repeated message id',
        (c) => (c.data.floors[1].pages[0].messages[0]._original_id = 'ms_0a'),
        /repeats the message id ms_0a/,
      ],
      [
        'an unknown branch',
        (c) => (c.data.floors[0].branch_id_ref = 'br_x'),
        /^\$\.data\.floors\[0\]\.branch_id_ref refers to br_x, which is not a branch/,
      ],
      [
        'an unknown superseding floor',
        (c) => (c.data.floors[2].superseded_by_floor_id_ref = 'fl_9'),
        /floors\[2\]\.superseded_by_floor_id_ref refers to fl_9/,
      ],
      [
        'an unknown branch head',
        (c) => (c.data.branches[0].head_floor_id_ref = 'fl_9'),
        /^\$\.data\.branches\[0\]\.head_floor_id_ref refers to fl_9/,
      ],
      [
        'a page id as parent floor',
        (c) => (c.data.floors[1].parent_floor_id_ref = 'pg_0a'),
        /parent_floor_id_ref refers to pg_0a, which is not a floor/,
      ],
      [
        'an unknown line',
        (c) => (c.data.floors[0].line_id_ref = 'ln_9'),
        /^\$\.data\.floors\[0\]\.line_id_ref refers to ln_9/,
      ],
      [
        'a line ref without lines',
        (c) => delete c.data.lines,
        /line_id_ref refers to ln_0, which is not a line/,
      ],
      [
        'a line with a parent and no fork',
        (c) => (c.data.lines[1].fork_floor_no = null),
        /^\$\.data\.lines\[1\] must have both parent_line_id_ref and fork_floor_no/,
      ],
      [
        'a floor_no that does not follow its parent',
        (c) => (c.data.floors[1].floor_no = 5),
        /^\$\.data\.floors\[1\]\.floor_no must be its parent's floor_no \+ 1 \(1\)/,
      ],
      [
        'a root floor that is not floor 0',
        (c) => (c.data.floors[0].floor_no = 1),
        /^\$\.data\.floors\[0\]\.floor_no must be 0 for a floor without parent/,
      ],
      [
        'a floor_no twice in a line',
        (c) => (c.data.floors[3].line_id_ref = 'ln_0'),
        /^\$\.data\.floors\[3\]\.floor_no repeats floor_no 2 in its line/,
      ],
      [
        'two generating floors in a branch',
        (c) => (c.data.floors[3].state = 'generating'),
        /^\$\.data\.floors\[4\]\.state is a second generating floor/,
      ],
      [
        'two active output pages',
        (c) => (c.data.floors[1].pages[1].is_active = true),
        /^\$\.data\.floors\[1\]\.pages\[2\]\.is_active is a second active output page/,
      ],
      [
        'a repeated page_no',
        (c) => (c.data.floors[1].pages[2].page_no = 1),
        /^\$\.data\.floors\[1\]\.pages\[2\]\.page_no repeats page_no 1/,
      ],
      [
        'a repeated seq',
        (c) => (c.data.floors[1].pages[2].messages[1].seq = 0),
        /pages\[2\]\.messages\[1\]\.seq repeats seq 0/,
      ],
      [
        'a repeated branch name',
        (c) => (c.data.branches[1].name = 'main'),
        /^\$\.data\.branches\[1\]\.name repeats the branch name main/,
      ],
      [
        'a global variable',
        (c) => (c.data.variables[0].scope = 'global'),
        /^\$\.data\.variables\[0\]\.scope must be one of chat, branch, floor, page/,
      ],
      [
        'a chat variable with a ref',
        (c) => (c.data.variables[0].scope_id_ref = 'br_main'),
        /^\$\.data\.variables\[0\]\.scope_id_ref must be null/,
      ],
      [
        'a floor variable on a page',
        (c) => (c.data.variables[2].scope_id_ref = 'pg_0a'),
        /^\$\.data\.variables\[2\]\.scope_id_ref refers to pg_0a, which is not a floor/,
      ],
      [
        'a variable without value',
        (c) => delete c.data.variables[1].value,
        /^\$\.data\.variables\[1\]\.value is missing/,
      ],
      [
        'a variable with an empty key',
        (c) => (c.data.variables[1].key = ''),
        /^\$\.data\.variables\[1\]\.key must be a non-empty string/,
      ],
      [
        'memories without edges',
        (c) => delete c.data.memories.edges,
        /^\$\.data\.memories\.edges must be an array/,
      ],
      [
        'a memory item without content',
        (c) => delete c.data.memories.items[1].content,
        /^\$\.data\.memories\.items\[1\]\.content must be a string/,
      ],
      [
        'a memory item covering an unknown floor',
        (c) => c.data.memories.items[0].covered_floor_id_refs.push('fl_9'),
        /items\[0\]\.covered_floor_id_refs\[2\] refers to fl_9/,
      ],
      [
        'a memory edge to an unknown item',
        (c) => (c.data.memories.edges[2].to_item_id_ref = 'mem_9'),
        /^\$\.data\.memories\.edges\[2\]\.to_item_id_ref refers to mem_9, which is not a memory item/,
      ],
      [
        'a memory edge without relation type',
        (c) => delete c.data.memories.edges[0].relation_type,
        /^\$\.data\.memories\.edges\[0\]\.relation_type must be a non-empty string/,
      ],
      [
        'a memory tier that is not a string',
        (c) => (c.data.memories.items[0].summary_tier = 3),
        /items\[0\]\.summary_tier must be a string or null/,
      ],
      [
        'a message extra that is not an object',
        (c) => (c.data.floors[0].pages[0].messages[0].extra = 'x'),
        /messages\[0\]\.extra must be an object/,
      ],
    ])('%s', (_title, change, message) => {
      const error = expectParseError(() => parseNchat(mutated(change)), message);
      expect(error.details).toEqual({ path: expect.stringMatching(/^\$/) });
    });

    it.each([
      ['text that is not JSON', '{"spec": "native_chat",', /not valid JSON/],
      ['a JSON array', '[]', /^\$ must be an object/],
    ])('rejects %s with import_parse_error', (_title, text, message) => {
      expectParseError(() => parseNchat(text), message);
    });
  });

  it('rejects a file without messages with import_empty', () => {
    const text = mutated((chat) => {
      for (const f of chat.data.floors) for (const p of f.pages) p.messages = [];
      delete chat.data.variables;
    });
    expectDomainError(() => parseNchat(text), 'import_empty');
  });

  it('warns about pages whose checksum does not match their messages, keeping the stored checksum', () => {
    const parsed = parseNchat(
      mutated((chat) => (chat.data.floors[1].pages[1].messages[0].content = 'edited')),
    );
    expect(parsed.warnings).toEqual(['1 page checksum(s) do not match their messages']);
    expect(parsed.chat.data.floors[1].pages[1].checksum).toBe(
      generatedChat().data.floors[1].pages[1].checksum,
    );
  });

  describe('pageChecksum', () => {
    const a = { role: 'assistant', content: 'hi', content_format: 'text', is_hidden: false };
    it('is a sha256 hex digest that depends on role, content, format, hidden flag and order', () => {
      const base = pageChecksum([a]);
      expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(pageChecksum([{ ...a }])).toBe(base);
      expect(pageChecksum([{ role: 'assistant', content: 'hi' }])).toBe(base);
      for (const other of [
        [{ ...a, role: 'user' }],
        [{ ...a, content: 'hi!' }],
        [{ ...a, content_format: 'markdown' }],
        [{ ...a, is_hidden: true }],
        [a, { ...a, content: 'x' }],
      ]) {
        expect(pageChecksum(other)).not.toBe(base);
      }
      expect(pageChecksum([a, { ...a, content: 'x' }])).not.toBe(pageChecksum([{ ...a, content: 'x' }, a]));
    });
  });

  describe('detectChatFormat', () => {
    it.each<[string, 'nchat' | 'ext_jsonl', () => string]>([
      ['an nchat file', 'nchat', () => serializeNchat(generatedChat())],
      [
        'an nchat file with a BOM and indentation',
        'nchat',
        () => `\ufeff  ${JSON.stringify(generatedChat(), null, 2)}`,
      ],
      ['an nchat file of an unsupported version', 'nchat', () => mutated((c) => (c.spec_version = '9.0.0'))],
      [
        'an ST chat file',
        'ext_jsonl',
        () => readFixture('chats', 'MacroMage.swipes.st-1.18.0.jsonl').toString('utf8'),
      ],
      [
        'a one-line ST chat',
        'ext_jsonl',
        () => '{"chat_metadata":{},"user_name":"unused","character_name":"unused"}',
      ],
      ['another JSON object', 'ext_jsonl', () => '{"spec":"chara_card_v2","data":{}}'],
      ['a JSON array', 'ext_jsonl', () => '[{"spec":"native_chat"}]'],
      ['broken JSON', 'ext_jsonl', () => '{"spec":"native_chat"'],
      ['empty text', 'ext_jsonl', () => ''],
    ])('%s is %s', (_title, format, text) => {
      expect(detectChatFormat(text())).toBe(format);
    });
  });
});
