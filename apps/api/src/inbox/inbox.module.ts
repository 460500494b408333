import { Module } from '@nestjs/common';
import {
  CreateInboxEntryUseCase,
  DecideInboxEntryUseCase,
  GetInboxEntryUseCase,
  InboxAccess,
  InboxJournal,
  ListInboxEntriesUseCase,
} from '@hearth/app';
import { InboxController } from './inbox.controller';

@Module({
  controllers: [InboxController],
  providers: [
    InboxAccess,
    InboxJournal,
    ListInboxEntriesUseCase,
    CreateInboxEntryUseCase,
    GetInboxEntryUseCase,
    DecideInboxEntryUseCase,
  ],
})
export class InboxModule {}
