import { sql } from 'kysely';
import type { Executor } from './database';

export const healthRepository = {
  async ping(db: Executor): Promise<boolean> {
    try {
      await sql`select 1`.execute(db);
      return true;
    } catch {
      return false;
    }
  },
};
