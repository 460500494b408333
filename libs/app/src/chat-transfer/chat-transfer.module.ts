import { Module } from '@nestjs/common';
import { RunChatTransferJobUseCase } from './run-chat-transfer-job.use-case';

/** The worker side of chat import and export: the `chat.transfer` job's work. */
@Module({
  providers: [RunChatTransferJobUseCase],
  exports: [RunChatTransferJobUseCase],
})
export class ChatTransferWorkModule {}
