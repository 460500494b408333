import type { Migration } from 'kysely/migration';
import * as platformCore from './20261121000000_platform_core';

/**
 * Every migration, in order. Forward only: a landed migration is never edited; a change is a new file
 * named `<YYYYMMDDHHMMSS>_<snake_name>.ts`, registered here.
 */
export const migrations: Record<string, Migration> = {
  '20261121000000_platform_core': platformCore,
};
