import { Body, Controller, Delete, Get, Param, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  BatchUpsertVariablesUseCase,
  DeleteVariableUseCase,
  GetVariableUseCase,
  ListPagePromotionsUseCase,
  ListPageStagedWritesUseCase,
  ListVariablesUseCase,
  ResolveVariablesUseCase,
  UpsertVariableUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  PageIdParamDto,
  ResolveQueryDto,
  toListInput,
  toPromotionView,
  toResolveView,
  toStagedWriteView,
  toVariableView,
  toWriteInput,
  VariableBatchDto,
  VariableIdParamDto,
  VariableListQueryDto,
  VariableWriteDto,
} from './variables.dto';

/** Spec 2 "Variables": five scopes, upsert, batch, list, resolve (docs/decisions.md "Variables"). */
@ApiTags('variables')
@Envelope('data')
@Controller('variables')
export class VariablesController {
  constructor(
    private readonly upsertVariable: UpsertVariableUseCase,
    private readonly batchUpsert: BatchUpsertVariablesUseCase,
    private readonly listVariables: ListVariablesUseCase,
    private readonly getVariable: GetVariableUseCase,
    private readonly deleteVariable: DeleteVariableUseCase,
    private readonly resolveVariables: ResolveVariablesUseCase,
  ) {}

  @Put()
  async upsert(
    @CurrentActor() actor: Actor,
    @Body() body: VariableWriteDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { variable, created } = await this.upsertVariable.execute(actor, toWriteInput(body));
    res.status(created ? 201 : 200);
    return toVariableView(variable);
  }

  @Put('batch')
  async batch(@CurrentActor() actor: Actor, @Body() body: VariableBatchDto) {
    const { results, meta } = await this.batchUpsert.execute(actor, body.items.map(toWriteInput));
    return {
      results: results.map((r) => ({ index: r.index, action: r.action, data: toVariableView(r.data) })),
      meta,
    };
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: VariableListQueryDto) {
    const { items, meta } = await this.listVariables.execute(actor, toListInput(query));
    return new DataList(items.map(toVariableView), meta);
  }

  @Get('resolve')
  async resolve(@CurrentActor() actor: Actor, @Query() query: ResolveQueryDto) {
    return toResolveView(
      await this.resolveVariables.execute(actor, {
        sessionId: query.session_id,
        branchId: query.branch_id,
        floorId: query.floor_id,
        pageId: query.page_id,
        includeLayers: query.include_layers ?? false,
      }),
    );
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: VariableIdParamDto) {
    return toVariableView(await this.getVariable.execute(actor, id));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: VariableIdParamDto) {
    return this.deleteVariable.execute(actor, id);
  }
}

/** The page-level variable ledger (spec 2): read-only. */
@ApiTags('variables')
@Envelope('data')
@Controller('pages/:pageId/variables')
export class PageVariablesController {
  constructor(
    private readonly stagedWrites: ListPageStagedWritesUseCase,
    private readonly promotions: ListPagePromotionsUseCase,
  ) {}

  @Get('staged')
  async staged(@CurrentActor() actor: Actor, @Param() { pageId }: PageIdParamDto) {
    const ledger = await this.stagedWrites.execute(actor, pageId);
    return { ...ledger, items: ledger.items.map(toStagedWriteView) };
  }

  @Get('promotions')
  async promotionTrace(@CurrentActor() actor: Actor, @Param() { pageId }: PageIdParamDto) {
    const ledger = await this.promotions.execute(actor, pageId);
    return { ...ledger, items: ledger.items.map(toPromotionView) };
  }
}
