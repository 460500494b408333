import { Module } from '@nestjs/common';
import {
  CancelRunUseCase,
  GenerateTurnUseCase,
  GetRunUseCase,
  ResolveModelForTurnUseCase,
  RunRegistry,
  StreamRunEventsUseCase,
  TurnCommitter,
  TurnRunner,
} from '@hearth/app';
import { RunsController } from './runs.controller';
import { TurnsController } from './turns.controller';

@Module({
  controllers: [TurnsController, RunsController],
  providers: [
    RunRegistry,
    TurnCommitter,
    TurnRunner,
    ResolveModelForTurnUseCase,
    GenerateTurnUseCase,
    GetRunUseCase,
    CancelRunUseCase,
    StreamRunEventsUseCase,
  ],
  // Temporary conversations run their turns on the same machinery (one generation slot pool, one registry).
  exports: [GenerateTurnUseCase, RunRegistry],
})
export class TurnsModule {}
