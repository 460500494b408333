/** Nest injection tokens for the platform resources opened at boot. */
export const CONFIG = Symbol('CONFIG');
export const DB = Symbol('DB');
export const DATABASE_HANDLE = Symbol('DATABASE_HANDLE');
/** The database handle's `pipeline`: single statements pipelined on one connection (group commit). */
export const DB_PIPELINE = Symbol('DB_PIPELINE');
/** The process's `CredentialCache` (API-key lookups; drop it after a local credential change). */
export const CREDENTIALS = Symbol('CREDENTIALS');
export const EVENT_BUS = Symbol('EVENT_BUS');
export const JOB_QUEUE = Symbol('JOB_QUEUE');
export const LOGGER = Symbol('LOGGER');
export const PLATFORM = Symbol('PLATFORM');
export const METRICS = Symbol('METRICS');
/** The `SecretBox` of model API keys (from APP_SECRETS_MASTER_KEY and previous keys). */
export const SECRET_BOX = Symbol('SECRET_BOX');
/** The one `LlmClient`, whose SDKs fetch through the network guard (ALLOW_PRIVATE_BASE_URL). */
export const LLM_CLIENT = Symbol('LLM_CLIENT');
/** The guarded fetch under LLM_CLIENT (closed at shutdown). */
export const GUARDED_FETCH = Symbol('GUARDED_FETCH');
