import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  BatchDeleteWorldbookEntriesUseCase,
  BatchUpdateWorldbookEntriesUseCase,
  CreateWorldbookEntryUseCase,
  DeleteWorldbookEntryUseCase,
  GetWorldbookEntryUseCase,
  ListWorldbookEntriesUseCase,
  ReorderWorldbookEntriesUseCase,
  UpdateWorldbookEntryUseCase,
  type BatchEntryOutcome,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  BatchIdsDto,
  BatchUpdateWorldbookEntriesDto,
  CreateWorldbookEntryDto,
  ExpectedVersionQueryDto,
  ListWorldbookEntriesQueryDto,
  pageMeta,
  PatchWorldbookEntryDto,
  ReorderWorldbookEntriesDto,
  toWorldbookEntryView,
  WorldbookEntriesParamDto,
  WorldbookEntryParamDto,
} from './worldbooks.dto';

/** Batch answers: `{results: [{index, id, action, data}], meta: {total, <action>, not_found, worldbook_version}}`. */
function batchView(outcome: BatchEntryOutcome, done: 'updated' | 'deleted') {
  const version = outcome.book.version;
  return {
    results: outcome.results.map((r) => ({
      index: r.index,
      id: r.id,
      action: r.action,
      data: r.data ? toWorldbookEntryView(r.data, version) : null,
    })),
    meta: {
      total: outcome.results.length,
      [done]: outcome.results.filter((r) => r.action === done).length,
      not_found: outcome.results.filter((r) => r.action === 'not_found').length,
      worldbook_version: version,
    },
  };
}

/** Spec 3 worldbook entries, under `/worldbooks/:worldbook_id/entries`, in `{data}`. */
@ApiTags('worldbooks')
@Envelope('data')
@Controller('worldbooks/:worldbook_id/entries')
export class WorldbookEntriesController {
  constructor(
    private readonly listEntries: ListWorldbookEntriesUseCase,
    private readonly createEntry: CreateWorldbookEntryUseCase,
    private readonly getEntry: GetWorldbookEntryUseCase,
    private readonly updateEntry: UpdateWorldbookEntryUseCase,
    private readonly deleteEntry: DeleteWorldbookEntryUseCase,
    private readonly batchUpdate: BatchUpdateWorldbookEntriesUseCase,
    private readonly batchDelete: BatchDeleteWorldbookEntriesUseCase,
    private readonly reorder: ReorderWorldbookEntriesUseCase,
  ) {}

  @Get()
  async list(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id }: WorldbookEntriesParamDto,
    @Query() query: ListWorldbookEntriesQueryDto,
  ) {
    const q = {
      q: query.q,
      disable: query.disable,
      constant: query.constant,
      position: query.position,
      limit: query.limit ?? 50,
      offset: query.offset ?? 0,
      sortBy: query.sort_by ?? 'order',
      sortOrder: query.sort_order ?? 'asc',
    } as const;
    const page = await this.listEntries.execute(actor, worldbook_id, q);
    return new DataList(
      page.rows.map((row) => toWorldbookEntryView(row, page.book.version)),
      pageMeta(
        { ...q, total: page.total },
        page.rows.length,
        { sort_by: q.sortBy, sort_order: q.sortOrder },
        { worldbook_version: page.book.version },
      ),
    );
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id }: WorldbookEntriesParamDto,
    @Body() body: CreateWorldbookEntryDto,
  ) {
    const { entry, book } = await this.createEntry.execute(actor, worldbook_id, body);
    return toWorldbookEntryView(entry, book.version);
  }

  @Patch('batch/update')
  async updateMany(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id }: WorldbookEntriesParamDto,
    @Body() body: BatchUpdateWorldbookEntriesDto,
  ) {
    return batchView(await this.batchUpdate.execute(actor, worldbook_id, body), 'updated');
  }

  @Post('batch/delete')
  @HttpCode(200)
  async deleteMany(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id }: WorldbookEntriesParamDto,
    @Body() body: BatchIdsDto,
  ) {
    return batchView(await this.batchDelete.execute(actor, worldbook_id, body), 'deleted');
  }

  @Put('batch/reorder')
  async reorderMany(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id }: WorldbookEntriesParamDto,
    @Body() body: ReorderWorldbookEntriesDto,
  ) {
    return batchView(await this.reorder.execute(actor, worldbook_id, body), 'updated');
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { worldbook_id, id }: WorldbookEntryParamDto) {
    const { entry, book } = await this.getEntry.execute(actor, worldbook_id, id);
    return toWorldbookEntryView(entry, book.version);
  }

  @Patch(':id')
  async update(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id, id }: WorldbookEntryParamDto,
    @Body() body: PatchWorldbookEntryDto,
  ) {
    const { entry, book } = await this.updateEntry.execute(actor, worldbook_id, id, body);
    return toWorldbookEntryView(entry, book.version);
  }

  @Delete(':id')
  async remove(
    @CurrentActor() actor: Actor,
    @Param() { worldbook_id, id }: WorldbookEntryParamDto,
    @Query() query: ExpectedVersionQueryDto,
  ) {
    return this.deleteEntry.execute(actor, worldbook_id, id, query.expected_version);
  }
}
