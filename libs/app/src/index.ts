export * from './accounts/account-provisioning';
export * from './accounts/bootstrap-default-account.use-case';
export * from './core-app.module';
export * from './events/project-event-writer';
export * from './operation-logs/operation-log-writer';
