export * from './secret-box';
export * from './rotate-secrets';
export * from './rotate-secrets.command';
