export * from './errors';
export * from './ids';
export * from './api-keys';
export * from './operation-logs/operation-log.rules';
