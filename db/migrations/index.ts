import type { Migration } from 'kysely/migration';
import * as platformCore from './20261121000000_platform_core';
import * as jobLeases from './20261121004000_job_leases';
import * as derivedOutputs from './20261121005000_derived_outputs';
import * as inbox from './20261121006000_inbox';
import * as projectSettings from './20261121007000_project_settings';
import * as assetVersions from './20261122000000_asset_versions';
import * as conversationCore from './20261122001000_conversation_core';
import * as presetsRegex from './20261122020000_presets_regex';
import * as userCards from './20261122040000_user_cards';
import * as vcTags from './20261122050000_vc_tags';
import * as worldbooks from './20261122030000_worldbooks';
import * as characters from './20261122010000_characters';
import * as conversationModel from './20261122060000_conversation_model';
import * as promptRuntime from './20261122070000_prompt_runtime';
import * as llmBindings from './20261122080000_llm_bindings';
import * as variables from './20261122090000_variables';
import * as generationRuns from './20261122110000_generation_runs';
import * as chatTransfer from './20261122120000_chat_transfer';
import * as floorPromptSnapshots from './20261122100000_floor_prompt_snapshots';
import * as llmResolutionVersions from './20261122130000_llm_resolution_versions';
import * as sessionPromptSettings from './20261122140000_session_prompt_settings';
import * as historyEdits from './20261122150000_history_edits';
import * as credentialChanges from './20261126100000_credential_changes';
import * as projectEventsSessionPartial from './20261126200000_project_events_session_partial';
import * as agents from './20261127100000_agents';
import * as temporaryConversations from './20261127110000_temporary_conversations';
import * as backup from './20261127120000_backup';
import * as nodeGraphs from './20261127130000_node_graphs';
import * as authorsNotePersonaPosition from './20261128100000_authors_note_persona_position';
import * as authorsNoteBackfill from './20261128110000_authors_note_backfill';
import * as clientData from './20261128120000_client_data';
import * as pageStagedWriteSources from './20261128130000_page_staged_write_sources';

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
  '20261122020000_presets_regex': presetsRegex,
  '20261122040000_user_cards': userCards,
  '20261122050000_vc_tags': vcTags,
  '20261122030000_worldbooks': worldbooks,
  '20261122010000_characters': characters,
  '20261122060000_conversation_model': conversationModel,
  '20261122070000_prompt_runtime': promptRuntime,
  '20261122080000_llm_bindings': llmBindings,
  '20261122090000_variables': variables,
  '20261122110000_generation_runs': generationRuns,
  '20261122120000_chat_transfer': chatTransfer,
  '20261122100000_floor_prompt_snapshots': floorPromptSnapshots,
  '20261122130000_llm_resolution_versions': llmResolutionVersions,
  '20261122140000_session_prompt_settings': sessionPromptSettings,
  '20261122150000_history_edits': historyEdits,
  '20261126100000_credential_changes': credentialChanges,
  '20261126200000_project_events_session_partial': projectEventsSessionPartial,
  '20261127100000_agents': agents,
  '20261127110000_temporary_conversations': temporaryConversations,
  '20261127120000_backup': backup,
  '20261127130000_node_graphs': nodeGraphs,
  '20261128100000_authors_note_persona_position': authorsNotePersonaPosition,
  '20261128110000_authors_note_backfill': authorsNoteBackfill,
  '20261128120000_client_data': clientData,
  '20261128130000_page_staged_write_sources': pageStagedWriteSources,
};
