export * from './forbidden-address';
export * from './ssrf-error';
export * from './url-policy';
export * from './guarded-fetch';
