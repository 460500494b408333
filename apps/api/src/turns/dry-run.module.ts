import { Module } from '@nestjs/common';
import { DryRunUseCase } from '@hearth/app';
import { DryRunController } from './dry-run.controller';

@Module({ controllers: [DryRunController], providers: [DryRunUseCase] })
export class DryRunModule {}
