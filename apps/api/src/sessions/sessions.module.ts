import { Module } from '@nestjs/common';
import {
  CreateSessionUseCase,
  DeleteSessionUseCase,
  GetSessionScopeUseCase,
  GetSessionUseCase,
  ListSessionsUseCase,
  UpdateSessionUseCase,
} from '@hearth/app';
import { SessionsController } from './sessions.controller';

@Module({
  controllers: [SessionsController],
  providers: [
    CreateSessionUseCase,
    ListSessionsUseCase,
    GetSessionUseCase,
    GetSessionScopeUseCase,
    UpdateSessionUseCase,
    DeleteSessionUseCase,
  ],
})
export class SessionsModule {}
