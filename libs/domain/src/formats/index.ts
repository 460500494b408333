export * from './format.rules';
export * from './png-card';
export * from './character-card';
export * from './worldbook';
export * from './preset';
export * from './regex-scripts';
