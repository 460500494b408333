export * from './errors';
export * from './ids';
export * from './api-keys';
