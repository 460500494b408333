import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pageChecksum } from '@hearth/domain';
import type { Response } from 'superagent';
import type { TestApp } from '../test-app';

/** The real SillyTavern chats of the codec fixtures (libs/domain/src/formats/__fixtures__/chats). */
export const CHAT_FIXTURES = join(__dirname, '../../../libs/domain/src/formats/__fixtures__/chats');
export const MACRO_MAGE = 'MacroMage.swipes.st-1.18.0.jsonl';
export const SERAPHINA = 'Seraphina.st-default-content.st-1.18.0.jsonl';

export const readChatFixture = (name: string): string => readFileSync(join(CHAT_FIXTURES, name), 'utf8');

/** A small `ext_jsonl` file: header, then `user`/`bot` lines alternating (`turns` exchanges). */
export function extJsonlChat(turns: number, options: { character?: string } = {}): string {
  const character = options.character ?? 'Factory Bot';
  const lines: string[] = [
    JSON.stringify({ user_name: 'unused', character_name: 'unused', chat_metadata: {} }),
  ];
  for (let i = 0; i < turns; i++) {
    lines.push(
      JSON.stringify({
        name: 'User',
        is_user: true,
        is_system: false,
        send_date: 1_700_000_000_000 + i,
        mes: `hi ${i}`,
        extra: {},
      }),
      JSON.stringify({
        name: character,
        is_user: false,
        send_date: 1_700_000_000_500 + i,
        mes: `hello ${i}`,
        extra: {},
      }),
    );
  }
  return lines.join('\n');
}

interface NchatMessageSpec {
  role?: string;
  content: string;
}

/**
 * A hand-made `nchat` file: `main` with one committed floor per entry of `floors` (input page then
 * output page), each page one message; `extra` merges into `data` (variables, memories, branches...).
 */
export function nchatFile(
  floors: Array<{ input: NchatMessageSpec; output: NchatMessageSpec }>,
  extra: Record<string, unknown> = {},
  specVersion = '1.0.0',
): Record<string, unknown> {
  const at = 1_700_000_000_000;
  const page = (id: string, no: number, kind: string, m: NchatMessageSpec) => {
    const messages = [
      {
        _original_id: `${id}-m`,
        seq: 0,
        role: m.role ?? (kind === 'input' ? 'user' : 'assistant'),
        content: m.content,
        content_format: 'text',
        is_hidden: false,
        source: 'import',
        token_count: null,
        token_encoding: null,
        created_at: at,
      },
    ];
    return {
      _original_id: id,
      page_no: no,
      page_kind: kind,
      is_active: true,
      version: 1,
      checksum: pageChecksum(messages),
      created_at: at,
      updated_at: at,
      messages,
    };
  };
  const floorRows = floors.map((f, i) => ({
    _original_id: `f${i}`,
    branch_id_ref: 'b-main',
    floor_no: i,
    parent_floor_id_ref: i === 0 ? null : `f${i - 1}`,
    line_id_ref: null,
    state: 'committed',
    token_in: 0,
    token_out: 0,
    reasoning_text: null,
    metadata: {},
    state_snapshot: null,
    superseded_at: null,
    superseded_by_floor_id_ref: null,
    created_at: at + i,
    updated_at: at + i,
    pages: [page(`p${i}-in`, 0, 'input', f.input), page(`p${i}-out`, 1, 'output', f.output)],
  }));
  return {
    spec: 'native_chat',
    spec_version: specVersion,
    exported_at: at,
    export_source: 'api',
    export_app_version: 'test',
    data: {
      title: 'Hand-made chat',
      status: 'active',
      branches: [
        {
          _original_id: 'b-main',
          name: 'main',
          source_floor_id_ref: null,
          head_floor_id_ref: floors.length > 0 ? `f${floors.length - 1}` : null,
          created_at: at,
          updated_at: at,
        },
      ],
      floors: floorRows,
      ...extra,
    },
  };
}

export interface ChatTransferJobJson {
  job_id: string;
  status: string;
  job_kind: string;
  format: string | null;
  requested_session_id: string | null;
  output_expires_at: number | null;
  result_session_id: string | null;
  result: Record<string, unknown> | null;
  error: { code: string | null; message: string } | null;
}

/** Polls `GET /chat-transfer-jobs/:id` until the job is `succeeded` or `dead_letter` (20 s at most). */
export async function waitForChatTransferJob(
  t: TestApp,
  apiKey: string,
  jobId: string,
): Promise<ChatTransferJobJson> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await t.http.get(`/chat-transfer-jobs/${jobId}`).set('x-api-key', apiKey);
    if (res.status !== 200) throw new Error(`GET /chat-transfer-jobs/${jobId} answered ${res.status}`);
    const job = res.body.data as ChatTransferJobJson;
    if (job.status === 'succeeded' || job.status === 'dead_letter') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A supertest parser that keeps the response body as text (downloads: `.buffer(true).parse(textBody)`). */
export function textBody(res: Response, done: (error: Error | null, body: string) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (text += chunk));
  stream.on('end', () => done(null, text));
}
