import { Module } from '@nestjs/common';
import {
  DeleteRegexProfileUseCase,
  ExportRegexProfileUseCase,
  GetRegexProfileUseCase,
  GetRegexProfileVersionUseCase,
  ImportRegexProfileUseCase,
  ListRegexProfilesUseCase,
  ListRegexProfileVersionsUseCase,
  RollbackRegexProfileUseCase,
  UpdateRegexProfileUseCase,
} from '@hearth/app';
import { RegexProfilesController } from './regex-profiles.controller';
import { RegexProfileTransferController } from './regex-profile-transfer.controller';

@Module({
  controllers: [RegexProfilesController, RegexProfileTransferController],
  providers: [
    ImportRegexProfileUseCase,
    ExportRegexProfileUseCase,
    ListRegexProfilesUseCase,
    GetRegexProfileUseCase,
    ListRegexProfileVersionsUseCase,
    GetRegexProfileVersionUseCase,
    UpdateRegexProfileUseCase,
    RollbackRegexProfileUseCase,
    DeleteRegexProfileUseCase,
  ],
})
export class RegexProfilesModule {}
