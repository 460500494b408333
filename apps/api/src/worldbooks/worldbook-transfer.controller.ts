import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ExportWorldbookUseCase, ImportWorldbookUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import {
  attachmentDisposition,
  ImportWorldbookDto,
  rawJsonObject,
  toWorldbookSummary,
  WorldbookIdParamDto,
} from './worldbooks.dto';

/** `POST /import/worldbook` (201 `{data}`) and `GET /export/worldbook/:id` (a file download). */
@ApiTags('worldbooks')
@Envelope('data')
@Controller()
export class WorldbookTransferController {
  constructor(
    private readonly importBook: ImportWorldbookUseCase,
    private readonly exportBook: ExportWorldbookUseCase,
  ) {}

  @Post('import/worldbook')
  async import(@CurrentActor() actor: Actor, @Body() body: ImportWorldbookDto, @Body('data') data: unknown) {
    const book = await this.importBook.execute(actor, { name: body.name, data: rawJsonObject(data) });
    return { ...toWorldbookSummary(book), entry_count: book.entry_count };
  }

  @Get('export/worldbook/:id')
  async export(
    @CurrentActor() actor: Actor,
    @Param() { id }: WorldbookIdParamDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { name, file } = await this.exportBook.execute(actor, id);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Disposition', attachmentDisposition(name));
    return new Raw(file);
  }
}
