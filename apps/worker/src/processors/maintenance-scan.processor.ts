import { Injectable } from '@nestjs/common';
import { RunMaintenanceScanUseCase } from '@hearth/app';
import type { JobProcessor } from './job-processor';

@Injectable()
export class MaintenanceScanProcessor implements JobProcessor<'maintenance.scan'> {
  readonly jobName = 'maintenance.scan' as const;

  constructor(private readonly scan: RunMaintenanceScanUseCase) {}

  async handle(): Promise<void> {
    await this.scan.execute();
  }
}
