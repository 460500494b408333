import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  DeleteWorldbookUseCase,
  GetWorldbookUseCase,
  GetWorldbookVersionUseCase,
  ListWorldbooksUseCase,
  ListWorldbookVersionsUseCase,
  RollbackWorldbookUseCase,
  UpdateWorldbookUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  ExpectedVersionQueryDto,
  ListWorldbooksQueryDto,
  pageMeta,
  PageQueryDto,
  PutWorldbookDto,
  rawJsonObject,
  RollbackWorldbookDto,
  toWorldbookSummary,
  toWorldbookVersionSummary,
  WorldbookIdParamDto,
  WorldbookVersionParamDto,
} from './worldbooks.dto';

/** Spec 3 "Worldbooks" (docs/decisions.md "Worldbooks"), in `{data}`. */
@ApiTags('worldbooks')
@Envelope('data')
@Controller('worldbooks')
export class WorldbooksController {
  constructor(
    private readonly listBooks: ListWorldbooksUseCase,
    private readonly getBook: GetWorldbookUseCase,
    private readonly putBook: UpdateWorldbookUseCase,
    private readonly deleteBook: DeleteWorldbookUseCase,
    private readonly listVersions: ListWorldbookVersionsUseCase,
    private readonly getVersion: GetWorldbookVersionUseCase,
    private readonly rollbackBook: RollbackWorldbookUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: ListWorldbooksQueryDto) {
    const q = {
      q: query.q,
      limit: query.limit ?? 50,
      offset: query.offset ?? 0,
      sortBy: query.sort_by ?? 'updated_at',
      sortOrder: query.sort_order ?? 'desc',
    } as const;
    const page = await this.listBooks.execute(actor, q);
    return new DataList(
      page.rows.map(toWorldbookSummary),
      pageMeta({ ...q, total: page.total }, page.rows.length, { sort_by: q.sortBy, sort_order: q.sortOrder }),
    );
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: WorldbookIdParamDto) {
    const { book, data } = await this.getBook.execute(actor, id);
    return { ...toWorldbookSummary(book), data };
  }

  @Put(':id')
  async put(
    @CurrentActor() actor: Actor,
    @Param() { id }: WorldbookIdParamDto,
    @Body() body: PutWorldbookDto,
    @Body('data') data: unknown,
  ) {
    return toWorldbookSummary(
      await this.putBook.execute(actor, id, {
        name: body.name,
        data: rawJsonObject(data),
        expected_version: body.expected_version,
        expected_updated_at: body.expected_updated_at,
      }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(
    @CurrentActor() actor: Actor,
    @Param() { id }: WorldbookIdParamDto,
    @Query() query: ExpectedVersionQueryDto,
  ): Promise<void> {
    await this.deleteBook.execute(actor, id, query.expected_version);
  }

  @Get(':id/versions')
  async versions(
    @CurrentActor() actor: Actor,
    @Param() { id }: WorldbookIdParamDto,
    @Query() query: PageQueryDto,
  ) {
    const page = { limit: query.limit ?? 50, offset: query.offset ?? 0 };
    const result = await this.listVersions.execute(actor, id, page);
    return new DataList(
      result.rows.map(toWorldbookVersionSummary),
      pageMeta({ ...page, total: result.total }, result.rows.length, {
        sort_by: 'version_no',
        sort_order: 'desc',
      }),
    );
  }

  @Get(':id/versions/:version_id')
  async version(@CurrentActor() actor: Actor, @Param() { id, version_id }: WorldbookVersionParamDto) {
    const { version, payload } = await this.getVersion.execute(actor, id, version_id);
    return { ...toWorldbookVersionSummary(version), payload };
  }

  @Post(':id/rollback')
  @HttpCode(200)
  async rollback(
    @CurrentActor() actor: Actor,
    @Param() { id }: WorldbookIdParamDto,
    @Body() body: RollbackWorldbookDto,
  ) {
    await this.rollbackBook.execute(actor, id, body);
    const { book, data } = await this.getBook.execute(actor, id);
    return { ...toWorldbookSummary(book), data };
  }
}
