import { Body, Controller, Delete, Get, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CreateClientDataNamespaceUseCase,
  DeleteClientDataNamespaceUseCase,
  GetClientDataNamespaceUseCase,
  GetClientDataUsageUseCase,
  ListClientDataNamespacesUseCase,
  UpdateClientDataNamespaceUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import { ClientDataEnabledGuard } from './client-data-enabled.guard';
import {
  CreateClientDataNamespaceDto,
  NoQueryDto,
  toClientDataNamespaceDetailView,
  toClientDataNamespaceView,
  UpdateClientDataNamespaceDto,
} from './client-data.dto';

/**
 * The account's client data namespace registry (docs/decisions.md "Client data and session state"),
 * in `{data}`. Every Client of the account reads it, only the account itself (its default Client)
 * writes it (403 `client_data_namespace_account_only`); another account's name is 404
 * `client_data_namespace_not_found`.
 */
@ApiTags('client data')
@Envelope('data')
@UseGuards(ClientDataEnabledGuard)
@Controller('client-data')
export class ClientDataController {
  constructor(
    private readonly createNamespace: CreateClientDataNamespaceUseCase,
    private readonly listNamespaces: ListClientDataNamespacesUseCase,
    private readonly getNamespace: GetClientDataNamespaceUseCase,
    private readonly updateNamespace: UpdateClientDataNamespaceUseCase,
    private readonly deleteNamespace: DeleteClientDataNamespaceUseCase,
    private readonly getUsage: GetClientDataUsageUseCase,
  ) {}

  @Post('namespaces')
  @ApiOperation({ summary: 'Register a session state namespace of the account' })
  async create(@CurrentActor() actor: Actor, @Body() body: CreateClientDataNamespaceDto) {
    return toClientDataNamespaceView(await this.createNamespace.execute(actor, body));
  }

  @Get('namespaces')
  @ApiOperation({ summary: 'The account’s namespaces, by name' })
  async list(@CurrentActor() actor: Actor, @Query() _query: NoQueryDto) {
    const items = (await this.listNamespaces.execute(actor)).map(toClientDataNamespaceView);
    return new DataList(items, { total: items.length });
  }

  @Get('namespaces/:name')
  @ApiOperation({ summary: 'A namespace with the writes, sessions and bytes it holds' })
  async detail(@CurrentActor() actor: Actor, @Param('name') name: string) {
    return toClientDataNamespaceDetailView(await this.getNamespace.execute(actor, name));
  }

  @Patch('namespaces/:name')
  @ApiOperation({ summary: 'Change a namespace’s description, replay policy or limits' })
  async update(
    @CurrentActor() actor: Actor,
    @Param('name') name: string,
    @Body() body: UpdateClientDataNamespaceDto,
  ) {
    return toClientDataNamespaceView(await this.updateNamespace.execute(actor, name, body));
  }

  @Delete('namespaces/:name')
  @ApiOperation({ summary: 'Delete a namespace and every session state write made in it' })
  async remove(@CurrentActor() actor: Actor, @Param('name') name: string) {
    return this.deleteNamespace.execute(actor, name);
  }

  @Get('usage')
  @ApiOperation({ summary: 'The account’s stored session state writes and its limits' })
  async usage(@CurrentActor() actor: Actor, @Query() _query: NoQueryDto) {
    return this.getUsage.execute(actor);
  }
}
