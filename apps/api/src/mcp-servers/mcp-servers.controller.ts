import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateMcpServerUseCase,
  DeleteMcpServerUseCase,
  GetMcpServerUseCase,
  ListMcpServersUseCase,
  UpdateMcpServerUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CreateMcpServerDto,
  ListMcpServersQueryDto,
  toMcpServerView,
  UpdateMcpServerDto,
} from './mcp-servers.dto';

/** The MCP server registry of the caller's default Workspace (docs/decisions.md "Settings"), in `{data}`. */
@ApiTags('mcp servers')
@Envelope('data')
@Controller('mcp-servers')
export class McpServersController {
  constructor(
    private readonly createServer: CreateMcpServerUseCase,
    private readonly listServers: ListMcpServersUseCase,
    private readonly getServer: GetMcpServerUseCase,
    private readonly updateServer: UpdateMcpServerUseCase,
    private readonly deleteServer: DeleteMcpServerUseCase,
  ) {}

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateMcpServerDto) {
    return toMcpServerView(await this.createServer.execute(actor, body));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() _query: ListMcpServersQueryDto) {
    const items = (await this.listServers.execute(actor)).map(toMcpServerView);
    return new DataList(items, { total: items.length });
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toMcpServerView(await this.getServer.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateMcpServerDto) {
    return toMcpServerView(await this.updateServer.execute(actor, id, body));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.deleteServer.execute(actor, id);
  }
}
