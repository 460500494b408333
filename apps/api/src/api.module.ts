import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { CoreAppModule } from '@hearth/app';
import { PlatformModule, type PlatformResources } from '@hearth/platform';
import { AuthGuard } from './http/auth.guard';
import { BodyBufferBudgetModule } from './http/body-budget';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { HealthController } from './health/health.controller';
import { MembersModule } from './members/members.module';
import { DerivedOutputsModule } from './derived-outputs/derived-outputs.module';
import { InboxModule } from './inbox/inbox.module';
import { NodeGraphsModule } from './node-graphs/node-graphs.module';
import { SettingsModule } from './settings/settings.module';
import { McpServersModule } from './mcp-servers/mcp-servers.module';
import { ClientDataModule } from './client-data/client-data.module';
import { ToolPoliciesModule } from './tool-policies/tool-policies.module';
import { EffectiveConfigModule } from './effective-config/effective-config.module';
import { ProjectsModule } from './projects/projects.module';
import { SessionsModule } from './sessions/sessions.module';
import { AccountsModule } from './accounts/accounts.module';
import { ClientsModule } from './clients/clients.module';
import { OperationLogsModule } from './operation-logs/operation-logs.module';
import { EventsModule } from './events/events.module';
import { PresetsModule } from './presets/presets.module';
import { RegexProfilesModule } from './regex-profiles/regex-profiles.module';
import { UserCardsModule } from './user-cards/user-cards.module';
import { VcTagsModule } from './vc-tags/vc-tags.module';
import { CharactersModule } from './characters/characters.module';
import { WorldbooksModule } from './worldbooks/worldbooks.module';
import { ConversationModule } from './conversation/conversation.module';
import { PromptRuntimeModule } from './prompt-runtime/prompt-runtime.module';
import { LlmProfilesModule } from './llm-profiles/llm-profiles.module';
import { VariablesModule } from './variables/variables.module';
import { DryRunModule } from './turns/dry-run.module';
import { PromptRuntimeReadsModule } from './prompt-runtime-reads/prompt-runtime-reads.module';
import { TurnsModule } from './turns/turns.module';
import { ChatTransferModule } from './chat-transfer/chat-transfer.module';
import { BackupModule } from './backup/backup.module';
import { PromptSettingsModule } from './prompt-settings/prompt-settings.module';
import { TemporaryConversationsModule } from './temporary-conversations/temporary-conversations.module';
import { AgentsModule } from './agents/agents.module';

/**
 * The API tier. Feature modules are listed in FEATURE_MODULES; each owns its controllers and the
 * use cases they call.
 */
const FEATURE_MODULES: NonNullable<DynamicModule['imports']> = [
  // feature modules, one per line
  MembersModule,
  DerivedOutputsModule,
  InboxModule,
  NodeGraphsModule,
  SettingsModule,
  McpServersModule,
  ToolPoliciesModule,
  EffectiveConfigModule,
  ProjectsModule,
  SessionsModule,
  AccountsModule,
  ClientsModule,
  OperationLogsModule,
  EventsModule,
  PresetsModule,
  RegexProfilesModule,
  UserCardsModule,
  VcTagsModule,
  CharactersModule,
  WorldbooksModule,
  ConversationModule,
  PromptRuntimeModule,
  LlmProfilesModule,
  VariablesModule,
  DryRunModule,
  PromptRuntimeReadsModule,
  TurnsModule,
  ChatTransferModule,
  BackupModule,
  PromptSettingsModule,
  TemporaryConversationsModule,
  AgentsModule,
  ClientDataModule,
];

@Module({})
export class ApiModule {
  static register(resources: PlatformResources): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        PlatformModule.register(resources),
        BodyBufferBudgetModule,
        CoreAppModule,
        ...FEATURE_MODULES,
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
