import { createHash } from 'node:crypto';
import { ID_PREFIX, newId } from '@hearth/domain';
import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import {
  conversationRepository,
  type AppendedMessageInput,
  type FloorRow,
  type MessageRow,
  type MessagesTable,
  type PageRow,
  type Tx,
} from '@hearth/persistence';

/** A message to write on a page. */
export interface MessageInput {
  role: MessagesTable['role'];
  content: string;
  /** Default `text`. */
  content_format?: string;
  /** Default false; hidden messages stay in the transcript and out of prompts. */
  is_hidden?: boolean;
  /** Who wrote it: `user`, `model`, `character_greeting`, `import`, ... */
  source: string;
}

export interface PageWithMessages {
  page: PageRow;
  messages: MessageRow[];
}

/** The encoding every stored message is counted with (spec: counted once, when written). */
export const MESSAGE_TOKEN_ENCODING = 'o200k_base' as const;

/** sha256 over the page's messages (role, content, format, hidden), so clients can tell pages apart. */
export function pageChecksum(messages: MessageInput[]): string {
  const body = JSON.stringify(
    messages.map((m) => [m.role, m.content, m.content_format ?? 'text', m.is_hidden ?? false]),
  );
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

/**
 * Writes a page of a floor with its messages: the next page_no of the floor, the next version of its
 * kind, the checksum, and each message's token count (o200k, never recounted), in one statement. With
 * `active`, the other pages of that kind are deactivated first (the caller holds the floor's row lock),
 * unless the caller knows the page is the first of its kind on the floor (`first`: a respond's output).
 */
export async function writePage(
  tx: Tx,
  floor: Pick<FloorRow, 'id' | 'account_id' | 'session_id'>,
  kind: PageRow['page_kind'],
  messages: MessageInput[],
  options: { active: boolean; now: number; first?: boolean },
): Promise<PageWithMessages> {
  const { now } = options;
  const pageId = newId(ID_PREFIX.page);
  if (options.active && !options.first)
    await conversationRepository.deactivateOtherPages(tx, floor.id, kind, pageId, now);
  return conversationRepository.insertPageWithMessages(
    tx,
    {
      id: pageId,
      account_id: floor.account_id,
      session_id: floor.session_id,
      floor_id: floor.id,
      page_kind: kind,
      is_active: options.active,
      checksum: pageChecksum(messages),
      created_at: now,
    },
    messageRowsOf(messages),
  );
}

/** A page's messages as stored: new ids, `seq` in order, defaults, each token count (o200k, once). */
export function messageRowsOf(messages: MessageInput[]): AppendedMessageInput[] {
  const counter = tokenCounter(MESSAGE_TOKEN_ENCODING);
  return messages.map((m, seq) => ({
    id: newId(ID_PREFIX.message),
    seq,
    role: m.role,
    content: m.content,
    content_format: m.content_format ?? 'text',
    is_hidden: m.is_hidden ?? false,
    source: m.source,
    token_count: counter.count(m.content),
    token_encoding: counter.encoding,
  }));
}
