import { Module } from '@nestjs/common';
import {
  CreateAccountUseCase,
  DeleteAccountUseCase,
  GetAccountUseCase,
  IssueApiKeyUseCase,
  ListAccountsUseCase,
  UpdateAccountUseCase,
} from '@hearth/app';
import { AccountAdminGuard } from './account-admin.guard';
import { AccountsController } from './accounts.controller';

@Module({
  controllers: [AccountsController],
  providers: [
    AccountAdminGuard,
    ListAccountsUseCase,
    GetAccountUseCase,
    CreateAccountUseCase,
    UpdateAccountUseCase,
    DeleteAccountUseCase,
    IssueApiKeyUseCase,
  ],
})
export class AccountsModule {}
