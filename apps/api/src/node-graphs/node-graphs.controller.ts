import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateNodeGraphUseCase,
  DeleteNodeGraphUseCase,
  GetNodeGraphUseCase,
  ListNodeGraphsUseCase,
  UpdateNodeGraphUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import {
  CreateNodeGraphDto,
  DeleteNodeGraphQueryDto,
  ListNodeGraphsQueryDto,
  toNodeGraphSummaryView,
  toNodeGraphView,
  UpdateNodeGraphDto,
} from './node-graphs.dto';

/** Project node graphs (spec 1 names the prefix; the design is in the decisions doc), no data wrapper. */
@ApiTags('node-graphs')
@Envelope('bare')
@Controller('projects/:id/node-graphs')
export class NodeGraphsController {
  constructor(
    private readonly listGraphs: ListNodeGraphsUseCase,
    private readonly createGraph: CreateNodeGraphUseCase,
    private readonly getGraph: GetNodeGraphUseCase,
    private readonly updateGraph: UpdateNodeGraphUseCase,
    private readonly deleteGraph: DeleteNodeGraphUseCase,
  ) {}

  /** Summaries without the documents. */
  @Get()
  async list(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Query() query: ListNodeGraphsQueryDto,
  ) {
    const page = await this.listGraphs.execute(actor, projectId, query);
    return { items: page.items.map(toNodeGraphSummaryView), next_cursor: page.next_cursor };
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: CreateNodeGraphDto,
  ) {
    return { item: toNodeGraphView(await this.createGraph.execute(actor, projectId, body)) };
  }

  @Get(':graph_id')
  async detail(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('graph_id') graphId: string,
  ) {
    return { item: toNodeGraphView(await this.getGraph.execute(actor, projectId, graphId)) };
  }

  @Patch(':graph_id')
  async update(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('graph_id') graphId: string,
    @Body() body: UpdateNodeGraphDto,
  ) {
    return { item: toNodeGraphView(await this.updateGraph.execute(actor, projectId, graphId, body)) };
  }

  /** Deletes the graph (no archive); 204 without a body. */
  @Delete(':graph_id')
  @HttpCode(204)
  async remove(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('graph_id') graphId: string,
    @Query() query: DeleteNodeGraphQueryDto,
  ): Promise<void> {
    await this.deleteGraph.execute(actor, projectId, graphId, query);
  }
}
