import type { Migration } from 'kysely/migration';
import * as platformCore from './20261121000000_platform_core';
import * as jobLeases from './20261121004000_job_leases';
import * as derivedOutputs from './20261121005000_derived_outputs';
import * as inbox from './20261121006000_inbox';
import * as projectSettings from './20261121007000_project_settings';
import * as assetVersions from './20261122000000_asset_versions';
import * as conversationCore from './20261122001000_conversation_core';

/**
 * Every migration, in order. Forward only: a landed migration is never edited; a change is a new file
 * named `<YYYYMMDDHHMMSS>_<snake_name>.ts`, registered here.
 */
export const migrations: Record<string, Migration> = {
  '20261121000000_platform_core': platformCore,
  '20261121004000_job_leases': jobLeases,
  '20261121005000_derived_outputs': derivedOutputs,
  '20261121006000_inbox': inbox,
  '20261121007000_project_settings': projectSettings,
  '20261122000000_asset_versions': assetVersions,
  '20261122001000_conversation_core': conversationCore,
};
