import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  BatchDeleteUserCardsUseCase,
  BatchUpdateUserCardStatusUseCase,
  CreateUserCardUseCase,
  DeleteUserCardUseCase,
  GetUserCardUseCase,
  ListUserCardsUseCase,
  UpdateUserCardUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CreateUserCardDto,
  DeleteUserCardDto,
  toUserCardListInput,
  toUserCardView,
  UpdateUserCardDto,
  UserCardBatchIdsDto,
  UserCardBatchStatusDto,
  UserCardListQueryDto,
} from './user-cards.dto';

/**
 * Spec 3 "User cards" in `{data}`. The batch routes are declared before the `:id` routes so that
 * `/users/batch/...` is never taken for a card id.
 */
@ApiTags('user cards')
@Envelope('data')
@Controller('users')
export class UserCardsController {
  constructor(
    private readonly createCard: CreateUserCardUseCase,
    private readonly listCards: ListUserCardsUseCase,
    private readonly getCard: GetUserCardUseCase,
    private readonly updateCard: UpdateUserCardUseCase,
    private readonly deleteCard: DeleteUserCardUseCase,
    private readonly batchStatus: BatchUpdateUserCardStatusUseCase,
    private readonly batchDelete: BatchDeleteUserCardsUseCase,
  ) {}

  @Patch('batch/status')
  async setStatuses(@CurrentActor() actor: Actor, @Body() body: UserCardBatchStatusDto) {
    return this.batchStatus.execute(actor, { ids: body.ids, status: body.status });
  }

  @Post('batch/delete')
  @HttpCode(200)
  async deleteMany(@CurrentActor() actor: Actor, @Body() body: UserCardBatchIdsDto) {
    return this.batchDelete.execute(actor, { ids: body.ids });
  }

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateUserCardDto) {
    return toUserCardView(await this.createCard.execute(actor, { snapshot: body.snapshot }));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: UserCardListQueryDto) {
    const list = await this.listCards.execute(actor, toUserCardListInput(query));
    return new DataList(list.items.map(toUserCardView), list.meta);
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toUserCardView(await this.getCard.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateUserCardDto) {
    return toUserCardView(await this.updateCard.execute(actor, id, body));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: DeleteUserCardDto) {
    return this.deleteCard.execute(actor, id, { expected_revision: body?.expected_revision });
  }
}
