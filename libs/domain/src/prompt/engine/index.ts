export * from './engine.types';
export * from './build-prompt';
export * from './macro-context';
export * from './authors-note';
export * from './authors-note-prompt';
