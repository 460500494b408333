import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Param,
  Post,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { ApiConsumes, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ExportCharacterUseCase, ImportCharacterUseCase, type CharacterImportSource } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import { CharacterImportInterceptor, type UploadedCardFile } from './character-import.interceptor';
import {
  CharacterIdParamDto,
  ExportCharacterQueryDto,
  ImportCharacterDto,
  toCharacterSummary,
  toImportedSession,
} from './characters.dto';
import { attachmentDisposition } from './content-disposition';

/** `POST /import/character` and `GET /export/character/:id` (spec 3 "Imports", "Exports"). */
@ApiTags('characters')
@Envelope('data')
@Controller()
export class CharacterTransferController {
  constructor(
    private readonly importCharacter: ImportCharacterUseCase,
    private readonly exportCharacter: ExportCharacterUseCase,
  ) {}

  @Post('import/character')
  @ApiConsumes('application/json', 'multipart/form-data')
  @UseInterceptors(CharacterImportInterceptor)
  async import(
    @CurrentActor() actor: Actor,
    @Body() body: ImportCharacterDto,
    @UploadedFile() file: UploadedCardFile | undefined,
  ) {
    const result = await this.importCharacter.execute(actor, {
      source: importSource(body, file),
      create_session: body.create_session,
      title: body.title,
    });
    const character = toCharacterSummary(result.character);
    if (!result.session) {
      return {
        create_session: false,
        character,
        character_id: result.character.id,
        character_version_id: result.version.id,
        warnings: result.warnings,
      };
    }
    return {
      create_session: true,
      character,
      session: toImportedSession(result.session, result),
      warnings: result.warnings,
    };
  }

  /** A file download: the card envelope as `<name>.json`. */
  @Get('export/character/:id')
  async export(
    @CurrentActor() actor: Actor,
    @Param() { id }: CharacterIdParamDto,
    @Query() query: ExportCharacterQueryDto,
    @Res({ passthrough: true }) response: Response,
  ) {
    const { name, card } = await this.exportCharacter.execute(actor, id, query.format, query.version_id);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Disposition', attachmentDisposition(name, '.json', 'character'));
    return new Raw(card);
  }
}

function importSource(body: ImportCharacterDto, file: UploadedCardFile | undefined): CharacterImportSource {
  const given = [body.payload !== undefined, body.png_base64 !== undefined, file !== undefined];
  if (given.filter(Boolean).length !== 1) {
    const message = 'Send exactly one card: payload (JSON object), png_base64, or a multipart file field';
    throw new BadRequestException({
      code: 'validation_error',
      message,
      details: { fields: [{ field: 'payload', problems: [message] }] },
    });
  }
  if (file) return { kind: 'file', bytes: file.buffer };
  if (body.png_base64 !== undefined) {
    return { kind: 'file', bytes: Buffer.from(body.png_base64.replace(/\s+/g, ''), 'base64'), pngOnly: true };
  }
  return { kind: 'card', payload: body.payload };
}
