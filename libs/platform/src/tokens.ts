/** Nest injection tokens for the platform resources opened at boot. */
export const CONFIG = Symbol('CONFIG');
export const DB = Symbol('DB');
export const DATABASE_HANDLE = Symbol('DATABASE_HANDLE');
export const EVENT_BUS = Symbol('EVENT_BUS');
export const JOB_QUEUE = Symbol('JOB_QUEUE');
export const LOGGER = Symbol('LOGGER');
export const PLATFORM = Symbol('PLATFORM');
export const METRICS = Symbol('METRICS');
