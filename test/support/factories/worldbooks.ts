import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { operationLogsRepository, type OperationLogRow, type WorldbookEntryRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';

export const WORLDBOOK_FIXTURES = join(__dirname, '../../../libs/domain/src/formats/__fixtures__/worldbooks');

export function readWorldbookFixture(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(WORLDBOOK_FIXTURES, file), 'utf8')) as Record<string, unknown>;
}

/** An ST world file with `count` entries keyed by uid 0..count-1 (keys `key-<uid>`, content `Entry <uid> …`). */
export function generateWorldbook(
  count: number,
  options: { name?: string; contentBytes?: number } = {},
): Record<string, unknown> {
  const entries: Record<string, unknown> = {};
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((options.contentBytes ?? 60) / 27));
  for (let uid = 0; uid < count; uid++) {
    entries[String(uid)] = {
      uid,
      key: [`key-${uid}`, uid % 2 === 0 ? 'Even' : 'Odd'],
      keysecondary: [],
      comment: `Comment ${uid}`,
      content: `Entry ${uid} ${filler.slice(0, options.contentBytes ?? 60)}`,
      constant: uid % 10 === 0,
      selective: true,
      selectiveLogic: 0,
      order: 100 + (uid % 7),
      position: uid % 5,
      disable: uid % 3 === 0,
      depth: 4,
      role: 0,
      probability: 100,
      useProbability: true,
      displayIndex: uid,
    };
  }
  return { ...(options.name ? { name: options.name } : {}), entries };
}

/** `POST /import/worldbook` through the API; returns the summary. */
export async function importWorldbook(
  t: TestApp,
  apiKey: string,
  data: Record<string, unknown>,
  name?: string,
): Promise<{ id: string; name: string; version: number; updated_at: number }> {
  const res = await t.http
    .post('/import/worldbook')
    .set('x-api-key', apiKey)
    .send({ ...(name ? { name } : {}), data });
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The stored entry rows of a book, by uid (straight from the table). */
export async function worldbookEntryRows(t: TestApp, worldbookId: string): Promise<WorldbookEntryRow[]> {
  return t.resources.database.db
    .selectFrom('worldbook_entries')
    .selectAll()
    .where('worldbook_id', '=', worldbookId)
    .orderBy('uid', 'asc')
    .execute();
}

/** How many worldbooks and entries an account has. */
export async function countWorldbookRows(
  t: TestApp,
  accountId: string,
): Promise<{ books: number; entries: number }> {
  const db = t.resources.database.db;
  const books = await db
    .selectFrom('worldbooks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const entries = await db
    .selectFrom('worldbook_entries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { books: Number(books.n), entries: Number(entries.n) };
}

/** The account's operation logs, oldest first. */
export async function accountLogs(t: TestApp, accountId: string): Promise<OperationLogRow[]> {
  return operationLogsRepository.list(
    t.resources.database.db,
    { accountId, filters: {} },
    { limit: 10000, offset: 0, sortOrder: 'asc' },
  );
}
