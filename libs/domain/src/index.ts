export * from './errors';
export * from './ids';
export * from './api-keys';
export * from './operation-logs/operation-log.rules';
export * from './paging/paging.rules';
export * from './members/member.rules';
export * from './derived-outputs/derived-output.rules';
export * from './inbox/inbox.rules';
