import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Length, ValidateIf } from 'class-validator';
import { BACKUP_LOG_MODES, type BackupLogMode } from '@hearth/domain';

/** Optional, and `null` counts as absent. */
const Optional = () => ValidateIf((_o, v) => v !== undefined && v !== null);

/** `POST /backup/jobs/export` body. */
export class ExportBackupDto {
  @ApiPropertyOptional({ enum: BACKUP_LOG_MODES, default: 'none' })
  @IsOptional()
  @IsIn(BACKUP_LOG_MODES)
  include_operation_logs?: BackupLogMode;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  include_vc_tags?: boolean;
}

/** `POST /backup/jobs/restore` body: exactly one of `document` and `export_job_id`. */
export class RestoreBackupDto {
  @ApiPropertyOptional({ description: 'A backup document (`spec: hearth_backup`)', type: Object })
  @Optional()
  @IsObject()
  document?: Record<string, unknown> | null;

  @ApiPropertyOptional({ description: 'A succeeded backup export job of this account' })
  @Optional()
  @IsString()
  @Length(1, 200)
  export_job_id?: string | null;
}

export class BackupJobIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}
