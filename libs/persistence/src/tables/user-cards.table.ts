import type { Json } from './core.table';

export type UserCardStatus = 'active' | 'disabled' | 'deleted';

/** A user card (spec 3 "User card"; db/migrations/20261122040000_user_cards.ts). */
export interface UserCardsTable {
  id: string;
  account_id: string;
  /** `snapshot.name`, kept in a column for uniqueness, search and sorting. */
  name: string;
  status: UserCardStatus;
  snapshot: Json<Record<string, unknown>>;
  revision: number;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}
