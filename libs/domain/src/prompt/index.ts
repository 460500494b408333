export * from './regex';
export * from './lorebook';
export * from './macros';
export * from './shared';
export * from './assembly';
export * from './injections';
export * from './policy';
export * from './engine';
