export * from './database';
export * from './migrator';
export * from './tables';
export * from './transaction';
export * from './credentials.repository';
export * from './accounts.repository';
export * from './locks.repository';
export * from './health.repository';
