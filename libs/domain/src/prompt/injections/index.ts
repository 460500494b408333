export * from './injections';
export * from './injection-payload';
