import type { WorldbookEntryRow, WorldbookRow } from '@hearth/persistence';

/** An entry after a write, with its book (whose new `version` the next write must expect). */
export interface EntryWrite {
  entry: WorldbookEntryRow;
  book: WorldbookRow;
}

/** One result of a batch route, in the order of the ids sent. */
export interface BatchEntryResult {
  index: number;
  id: string;
  action: 'updated' | 'deleted' | 'not_found';
  data: WorldbookEntryRow | null;
}

export interface BatchEntryOutcome {
  results: BatchEntryResult[];
  book: WorldbookRow;
}
