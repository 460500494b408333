export * from './engine.types';
export * from './build-prompt';
export * from './macro-context';
