import { Global, Module } from '@nestjs/common';
import { ProjectAccess } from '@hearth/permissions';
import { BootstrapDefaultAccountUseCase } from './accounts/bootstrap-default-account.use-case';
import { ProjectEventWriter } from './events/project-event-writer';
import { OperationLogWriter } from './operation-logs/operation-log-writer';

/**
 * The shared pieces every feature's use cases need: the permission gate and the two writers.
 * Imported once by each tier's root module.
 */
@Global()
@Module({
  providers: [ProjectAccess, ProjectEventWriter, OperationLogWriter, BootstrapDefaultAccountUseCase],
  exports: [ProjectAccess, ProjectEventWriter, OperationLogWriter, BootstrapDefaultAccountUseCase],
})
export class CoreAppModule {}
