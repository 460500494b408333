import { Module } from '@nestjs/common';
import {
  AppendTemporaryMessageUseCase,
  CreateTemporaryConversationUseCase,
  EndTemporaryConversationUseCase,
  ExportTemporaryConversationUseCase,
  GetTemporaryConversationUseCase,
  GetTemporaryTranscriptUseCase,
  InspectTemporaryConversationUseCase,
  TemporaryConversationTurnUseCase,
} from '@hearth/app';
import { TurnsModule } from '../turns/turns.module';
import { TemporaryConversationsController } from './temporary-conversations.controller';

/** Spec 2 temporary conversations; the turn machinery (one GenerateTurnUseCase, one RunRegistry) is TurnsModule's. */
@Module({
  imports: [TurnsModule],
  controllers: [TemporaryConversationsController],
  providers: [
    CreateTemporaryConversationUseCase,
    GetTemporaryConversationUseCase,
    AppendTemporaryMessageUseCase,
    TemporaryConversationTurnUseCase,
    GetTemporaryTranscriptUseCase,
    InspectTemporaryConversationUseCase,
    ExportTemporaryConversationUseCase,
    EndTemporaryConversationUseCase,
  ],
})
export class TemporaryConversationsModule {}
