export * from './engine.types';
export * from './build-prompt';
