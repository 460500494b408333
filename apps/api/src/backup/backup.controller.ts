import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  GetBackupFileUseCase,
  GetBackupJobUseCase,
  RequestBackupExportJobUseCase,
  RequestBackupRestoreJobUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import { attachmentDisposition } from '../characters/content-disposition';
import { BackupJobIdParamDto, ExportBackupDto, RestoreBackupDto } from './backup.dto';

/**
 * Account backups (spec 3 "Backup"): export and restore jobs, their status and the export's file (a
 * JSON download, `Content-Disposition: attachment`); everything else is `{data}`.
 */
@ApiTags('backup')
@Envelope('data')
@Controller('backup/jobs')
export class BackupController {
  constructor(
    private readonly requestExport: RequestBackupExportJobUseCase,
    private readonly requestRestore: RequestBackupRestoreJobUseCase,
    private readonly getJob: GetBackupJobUseCase,
    private readonly getFile: GetBackupFileUseCase,
  ) {}

  @Post('export')
  @HttpCode(202)
  export(@CurrentActor() actor: Actor, @Body() body: ExportBackupDto) {
    return this.requestExport.execute(actor, {
      include_operation_logs: body.include_operation_logs ?? 'none',
      include_vc_tags: body.include_vc_tags ?? true,
    });
  }

  @Post('restore')
  @HttpCode(202)
  restore(@CurrentActor() actor: Actor, @Body() body: RestoreBackupDto) {
    return this.requestRestore.execute(actor, body);
  }

  @Get(':id')
  job(@CurrentActor() actor: Actor, @Param() { id }: BackupJobIdParamDto) {
    return this.getJob.execute(actor, id);
  }

  @Get(':id/file')
  async file(
    @CurrentActor() actor: Actor,
    @Param() { id }: BackupJobIdParamDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Raw<string>> {
    const file = await this.getFile.execute(actor, id);
    response.setHeader('Content-Type', file.content_type);
    response.setHeader('Content-Disposition', attachmentDisposition(file.name, file.extension, 'backup'));
    return new Raw(file.content);
  }
}
