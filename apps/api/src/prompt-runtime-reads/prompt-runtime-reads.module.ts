import { Module } from '@nestjs/common';
import {
  CompareFloorPromptsUseCase,
  ExplainFloorPromptUseCase,
  InspectPromptUseCase,
  PreviewPromptMacrosUseCase,
} from '@hearth/app';
import {
  FloorPromptExplainController,
  SessionPromptReadsController,
} from './prompt-runtime-reads.controller';

@Module({
  controllers: [SessionPromptReadsController, FloorPromptExplainController],
  providers: [
    CompareFloorPromptsUseCase,
    ExplainFloorPromptUseCase,
    InspectPromptUseCase,
    PreviewPromptMacrosUseCase,
  ],
})
export class PromptRuntimeReadsModule {}
