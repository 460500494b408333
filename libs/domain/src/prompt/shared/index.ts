export * from './seeded-random';
export * from './token-counter';
