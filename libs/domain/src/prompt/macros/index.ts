export * from './types';
export * from './variables';
export * from './session';
export { MACRO_LIMITS, type CardField } from './runtime';
export { v2MacroNames, trimScopedContent } from './v2-definitions';
export { getStringHash, seedrandom } from './st-compat';
