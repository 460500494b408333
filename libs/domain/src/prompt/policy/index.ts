export * from './policy';
export * from './structure';
export * from './history-selection';
export * from './policy-patch';
