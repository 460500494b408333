import { Module } from '@nestjs/common';
import {
  CreateAccountUseCase,
  DeleteAccountUseCase,
  GetAccountUseCase,
  IssueApiKeyUseCase,
  ListAccountsUseCase,
  UpdateAccountUseCase,
} from '@hearth/app';
import { AccountsController } from './accounts.controller';

@Module({
  controllers: [AccountsController],
  providers: [
    ListAccountsUseCase,
    GetAccountUseCase,
    CreateAccountUseCase,
    UpdateAccountUseCase,
    DeleteAccountUseCase,
    IssueApiKeyUseCase,
  ],
})
export class AccountsModule {}
