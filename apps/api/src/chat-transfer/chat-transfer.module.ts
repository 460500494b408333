import { Module } from '@nestjs/common';
import {
  ExportChatUseCase,
  GetChatTransferFileUseCase,
  GetChatTransferJobUseCase,
  ImportChatUseCase,
  JobsModule,
  RequestChatExportJobUseCase,
  RequestChatImportJobUseCase,
} from '@hearth/app';
import { ChatTransferController } from './chat-transfer.controller';

/** `POST /import/chat[/jobs]`, `GET /export/chat/:id`, `POST /export/chat/:id/jobs`, `/chat-transfer-jobs/:id[/file]`. */
@Module({
  imports: [JobsModule.register()],
  controllers: [ChatTransferController],
  providers: [
    ImportChatUseCase,
    RequestChatImportJobUseCase,
    ExportChatUseCase,
    RequestChatExportJobUseCase,
    GetChatTransferJobUseCase,
    GetChatTransferFileUseCase,
  ],
})
export class ChatTransferModule {}
