import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ExportChatUseCase,
  GetChatTransferFileUseCase,
  GetChatTransferJobUseCase,
  ImportChatUseCase,
  RequestChatExportJobUseCase,
  RequestChatImportJobUseCase,
  type ChatFile,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import { attachmentDisposition } from '../characters/content-disposition';
import {
  ChatSessionIdParamDto,
  ChatTransferJobIdParamDto,
  ExportChatJobDto,
  ExportChatQueryDto,
  ImportChatDto,
} from './chat-transfer.dto';

/**
 * Chat import and export (spec 3 "Imports", "Exports"): sync routes, the async job routes and the job's
 * status and file. Downloads are files (`Content-Disposition: attachment`); everything else is `{data}`.
 */
@ApiTags('chat transfer')
@Envelope('data')
@Controller()
export class ChatTransferController {
  constructor(
    private readonly importChat: ImportChatUseCase,
    private readonly requestImport: RequestChatImportJobUseCase,
    private readonly exportChat: ExportChatUseCase,
    private readonly requestExport: RequestChatExportJobUseCase,
    private readonly getJob: GetChatTransferJobUseCase,
    private readonly getFile: GetChatTransferFileUseCase,
  ) {}

  @Post('import/chat')
  importSync(@CurrentActor() actor: Actor, @Body() body: ImportChatDto) {
    return this.importChat.execute(actor, body);
  }

  @Post('import/chat/jobs')
  @HttpCode(202)
  importAsync(@CurrentActor() actor: Actor, @Body() body: ImportChatDto) {
    return this.requestImport.execute(actor, body);
  }

  @Get('export/chat/:id')
  async exportSync(
    @CurrentActor() actor: Actor,
    @Param() { id }: ChatSessionIdParamDto,
    @Query() query: ExportChatQueryDto,
    @Res({ passthrough: true }) response: Response,
  ) {
    const file = await this.exportChat.execute(actor, id, {
      format: query.format ?? 'nchat',
      include_variables: query.include_variables ?? true,
      include_memories: query.include_memories ?? true,
    });
    return download(response, file);
  }

  @Post('export/chat/:id/jobs')
  @HttpCode(202)
  exportAsync(
    @CurrentActor() actor: Actor,
    @Param() { id }: ChatSessionIdParamDto,
    @Body() body: ExportChatJobDto,
  ) {
    return this.requestExport.execute(actor, id, {
      format: body.format ?? 'nchat',
      include_variables: body.include_variables ?? true,
      include_memories: body.include_memories ?? true,
    });
  }

  @Get('chat-transfer-jobs/:id')
  job(@CurrentActor() actor: Actor, @Param() { id }: ChatTransferJobIdParamDto) {
    return this.getJob.execute(actor, id);
  }

  @Get('chat-transfer-jobs/:id/file')
  async file(
    @CurrentActor() actor: Actor,
    @Param() { id }: ChatTransferJobIdParamDto,
    @Res({ passthrough: true }) response: Response,
  ) {
    return download(response, await this.getFile.execute(actor, id));
  }
}

/** The file as the response body, with its content type and attachment filename. */
function download(response: Response, file: ChatFile): Raw<string> {
  response.setHeader('Content-Type', file.content_type);
  response.setHeader('Content-Disposition', attachmentDisposition(file.name, file.extension, 'chat'));
  return new Raw(file.content);
}
