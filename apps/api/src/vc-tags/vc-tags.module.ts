import { Module } from '@nestjs/common';
import { CreateVcTagUseCase, DeleteVcTagUseCase, GetVcTagUseCase, ListVcTagsUseCase } from '@hearth/app';
import { VcTagsController } from './vc-tags.controller';

@Module({
  controllers: [VcTagsController],
  providers: [CreateVcTagUseCase, ListVcTagsUseCase, GetVcTagUseCase, DeleteVcTagUseCase],
})
export class VcTagsModule {}
