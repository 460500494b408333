export * from './accounts/account-provisioning';
export * from './accounts/bootstrap-default-account.use-case';
