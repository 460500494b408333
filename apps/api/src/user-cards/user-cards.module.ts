import { Module } from '@nestjs/common';
import {
  BatchDeleteUserCardsUseCase,
  BatchUpdateUserCardStatusUseCase,
  CreateUserCardUseCase,
  DeleteUserCardUseCase,
  GetUserCardUseCase,
  ListUserCardsUseCase,
  UpdateUserCardUseCase,
} from '@hearth/app';
import { UserCardsController } from './user-cards.controller';

@Module({
  controllers: [UserCardsController],
  providers: [
    CreateUserCardUseCase,
    ListUserCardsUseCase,
    GetUserCardUseCase,
    UpdateUserCardUseCase,
    DeleteUserCardUseCase,
    BatchUpdateUserCardStatusUseCase,
    BatchDeleteUserCardsUseCase,
  ],
})
export class UserCardsModule {}
