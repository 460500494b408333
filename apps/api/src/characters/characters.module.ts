import { Module } from '@nestjs/common';
import {
  DeleteCharacterUseCase,
  ExportCharacterUseCase,
  GetCharacterLorebookUseCase,
  GetCharacterUseCase,
  GetCharacterVersionUseCase,
  ImportCharacterUseCase,
  ListCharactersUseCase,
  ListCharacterVersionsUseCase,
  RollbackCharacterUseCase,
  UpdateCharacterUseCase,
} from '@hearth/app';
import { CharacterImportInterceptor } from './character-import.interceptor';
import { CharacterTransferController } from './character-transfer.controller';
import { CharactersController } from './characters.controller';

@Module({
  controllers: [CharactersController, CharacterTransferController],
  providers: [
    CharacterImportInterceptor,
    ImportCharacterUseCase,
    ExportCharacterUseCase,
    ListCharactersUseCase,
    GetCharacterUseCase,
    ListCharacterVersionsUseCase,
    GetCharacterVersionUseCase,
    GetCharacterLorebookUseCase,
    UpdateCharacterUseCase,
    RollbackCharacterUseCase,
    DeleteCharacterUseCase,
  ],
})
export class CharactersModule {}
