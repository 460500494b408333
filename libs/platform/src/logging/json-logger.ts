import type { LoggerService } from '@nestjs/common';
import type { LogLevel } from '../config/app-config';
import { currentRequestId } from './request-context';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogSink = (line: string) => void;

/**
 * One JSON object per line on stdout: `{time, level, msg, context, request_id, ...fields}`.
 * Used as Nest's logger, so framework messages come out in the same shape.
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly level: LogLevel = 'info',
    private readonly sink: LogSink = (line) => process.stdout.write(line + '\n'),
  ) {}

  private write(level: Exclude<LogLevel, 'silent'>, message: unknown, context?: unknown, fields?: object) {
    if (RANK[level] < RANK[this.level]) return;
    const entry: Record<string, unknown> = { time: Date.now(), level };
    if (message instanceof Error) {
      entry.msg = message.message;
      entry.stack = message.stack;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(entry, message);
    } else {
      entry.msg = String(message);
    }
    if (typeof context === 'string') entry.context = context;
    const requestId = currentRequestId();
    if (requestId && entry.request_id === undefined) entry.request_id = requestId;
    if (fields) Object.assign(entry, fields);
    this.sink(JSON.stringify(entry));
  }

  log(message: unknown, context?: unknown) {
    this.write('info', message, context);
  }
  info(message: unknown, fields?: object) {
    this.write('info', message, undefined, fields);
  }
  error(message: unknown, ...rest: unknown[]) {
    // Nest calls error(message, stack?, context?).
    const context = rest.length > 1 ? rest[rest.length - 1] : undefined;
    const stack = rest.length > 0 && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    this.write('error', message, context, stack ? { stack } : undefined);
  }
  warn(message: unknown, context?: unknown) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: unknown) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: unknown) {
    this.write('debug', message, context);
  }
}
