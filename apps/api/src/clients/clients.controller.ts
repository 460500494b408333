import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CreateClientUseCase, GetClientUseCase, ListClientsUseCase, UpdateClientUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto, OffsetPageQueryDto, offsetPage, offsetPageMeta } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import { CreateClientDto, toClientView, UpdateClientDto } from './clients.dto';

/** CONTRACT.md "Credentials": the Clients of the caller's account. */
@ApiTags('clients')
@Envelope('data')
@Controller('clients')
export class ClientsController {
  constructor(
    private readonly createClient: CreateClientUseCase,
    private readonly listClients: ListClientsUseCase,
    private readonly getClient: GetClientUseCase,
    private readonly updateClient: UpdateClientUseCase,
  ) {}

  /** The new Client with its API key, shown only in this response. */
  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateClientDto) {
    const { client, apiKey } = await this.createClient.execute(actor, body);
    return { ...toClientView(client), api_key: apiKey };
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: OffsetPageQueryDto) {
    const page = await this.listClients.execute(actor, offsetPage(query));
    return new DataList(page.items.map(toClientView), offsetPageMeta(page, page.items.length, 'created_at'));
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toClientView(await this.getClient.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateClientDto) {
    return toClientView(await this.updateClient.execute(actor, id, body));
  }
}
