import { Module } from '@nestjs/common';
import { CreateDerivedOutputUseCase } from '../derived-outputs/create-derived-output.use-case';
import { DerivedOutputAccess } from '../derived-outputs/derived-output-access';
import { DerivedOutputJournal } from '../derived-outputs/derived-output-journal';
import { CreateInboxEntryUseCase } from '../inbox/create-inbox-entry.use-case';
import { InboxAccess } from '../inbox/inbox-access';
import { InboxJournal } from '../inbox/inbox-journal';
import { StageAgentPageCandidateUseCase } from '../page-candidates/stage-agent-page-candidate.use-case';
import { AgentRunDelivery } from './agent-run-delivery';
import { AgentRunDispatcher } from './agent-run-dispatcher';
import { AgentRunModel } from './agent-run-model';
import { RunAgentJobUseCase } from './run-agent-job.use-case';

/**
 * The worker side of agents: the `agent.run` job's work (RunAgentJobUseCase, with the derived output,
 * inbox and page candidate write paths it delivers through) and the dispatch of trigger-created jobs.
 * Needs the worker's JobsModule (RunLedgerJobUseCase's settings) in the same application.
 */
@Module({
  providers: [
    RunAgentJobUseCase,
    AgentRunModel,
    AgentRunDelivery,
    AgentRunDispatcher,
    CreateDerivedOutputUseCase,
    DerivedOutputAccess,
    DerivedOutputJournal,
    CreateInboxEntryUseCase,
    InboxAccess,
    InboxJournal,
    StageAgentPageCandidateUseCase,
  ],
  exports: [RunAgentJobUseCase, AgentRunDispatcher],
})
export class AgentWorkModule {}
