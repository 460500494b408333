import { Body, Controller, Delete, Get, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateAccountUseCase,
  DeleteAccountUseCase,
  GetAccountUseCase,
  IssueApiKeyUseCase,
  ListAccountsUseCase,
  requireAccountAdmin,
  UpdateAccountUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import { ActorRuleGuard } from '../http/actor-rule.guard';
import {
  CreateAccountDto,
  IdParamDto,
  OffsetPageQueryDto,
  offsetPage,
  offsetPageMeta,
  toAccountView,
  UpdateAccountDto,
} from './accounts.dto';

/**
 * Spec 3 "Accounts" (admin role only) and CONTRACT.md `POST /accounts/:id/api-keys`. Every route is
 * an admin route: the guard answers 403 `account_forbidden` before the path, query or body is validated.
 */
@ApiTags('accounts')
@Envelope('data')
@UseGuards(ActorRuleGuard(requireAccountAdmin))
@Controller('accounts')
export class AccountsController {
  constructor(
    private readonly listAccounts: ListAccountsUseCase,
    private readonly getAccount: GetAccountUseCase,
    private readonly createAccount: CreateAccountUseCase,
    private readonly updateAccount: UpdateAccountUseCase,
    private readonly deleteAccount: DeleteAccountUseCase,
    private readonly issueApiKey: IssueApiKeyUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: OffsetPageQueryDto) {
    const page = await this.listAccounts.execute(actor, offsetPage(query));
    return new DataList(page.items.map(toAccountView), offsetPageMeta(page, page.items.length, 'created_at'));
  }

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateAccountDto) {
    return toAccountView(await this.createAccount.execute(actor, body));
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toAccountView(await this.getAccount.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateAccountDto) {
    return toAccountView(await this.updateAccount.execute(actor, id, body));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.deleteAccount.execute(actor, id);
  }

  /** A new key for the account's default Client, shown once. */
  @Post(':id/api-keys')
  async issueKey(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.issueApiKey.execute(actor, id);
  }
}
