export * from './user-regex';
export * from './regex-runtime';
export * from './script-support';
export { GUARD_BASE_STEPS, GUARD_STEPS_PER_CHAR } from './guarded-matcher';
