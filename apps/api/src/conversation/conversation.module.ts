import { Module } from '@nestjs/common';
import {
  ActivatePageUseCase,
  CreateBranchUseCase,
  GetFloorUseCase,
  ListBranchesUseCase,
  ListFloorsUseCase,
  ListPageCandidatesUseCase,
  ResetBranchUseCase,
} from '@hearth/app';
import { FloorsController } from './floors.controller';
import { PagesController } from './pages.controller';
import { SessionConversationController } from './session-conversation.controller';

@Module({
  controllers: [SessionConversationController, FloorsController, PagesController],
  providers: [
    ListFloorsUseCase,
    ListBranchesUseCase,
    ResetBranchUseCase,
    GetFloorUseCase,
    CreateBranchUseCase,
    ActivatePageUseCase,
    ListPageCandidatesUseCase,
  ],
})
export class ConversationModule {}
