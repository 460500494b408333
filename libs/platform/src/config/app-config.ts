/**
 * The validated configuration of a Hearth process. `loadConfig` is the only reader of
 * `process.env` (ARCHITECTURE.md rule 8); everything else receives an `AppConfig`.
 */
export type AccountMode = 'single' | 'multi';

export interface AppConfig {
  port: number;
  host: string;
  /** null: embedded Postgres (PGlite) in `dataDir`. */
  databaseUrl: string | null;
  /** null: in-process queues and event fan-out. */
  redisUrl: string | null;
  dataDir: string;
  bootstrapAdminApiKey: string | null;
  /** 32 raw bytes, or null when saving secrets is unavailable. */
  secretsMasterKey: Buffer | null;
  /**
   * `APP_SECRETS_PREVIOUS_MASTER_KEYS`: earlier master keys (comma list, each 32 bytes base64), kept
   * during a rotation so old ciphertexts still decrypt; never used to encrypt.
   */
  secretsPreviousMasterKeys: Buffer[];
  accountMode: AccountMode;
  allowPrivateBaseUrl: boolean;
  enableAgentRuntimeWorker: boolean;
  enableRuntimeMaintenance: boolean;
  enableTemporaryConversationCleanup: boolean;
  temporaryConversationCleanupGraceMs: number;
  chatImportMaxBytes: number;
  chatExportSyncMaxMessages: number;
  chatExportArtifactTtlMs: number;
  llm: { provider: string | null; model: string | null; baseUrl: string | null; apiKey: string | null };
  dbMigrateOnStart: boolean;
  logLevel: LogLevel;
  /** Largest JSON body the HTTP parser accepts; per-route limits are checked again below it. */
  bodyLimitBytes: number;
  /**
   * `HTTP_BODY_BUFFER_BUDGET_BYTES`: the most request-body bytes the API process holds while reading
   * bodies, over all requests (at least `bodyLimitBytes`); a body that does not fit answers 503
   * `resource_busy`.
   */
  bodyBufferBudgetBytes: number;
  /**
   * `HTTP_BODY_MIN_BYTES_PER_SECOND` and `HTTP_BODY_READ_GRACE_MS`: after the grace, a request body must
   * have arrived at this average rate, or it is answered 408 `request_timeout` and its share of the
   * budget is freed (a client trickling a large declared body would hold it for Node's 300 s request
   * timeout). 0 turns the rule off.
   */
  bodyMinBytesPerSecond: number;
  bodyReadGraceMs: number;
  /** Interval of the SSE heartbeat comment (spec 1: 15 s). */
  sseHeartbeatMs: number;
  /** `EVENT_STREAM_ENABLED`: false answers the event stream with 503 `feature_unavailable`. */
  eventStreamEnabled: boolean;
  /** Safety re-read of open event streams, so a lost wake-up only delays delivery. */
  eventStreamPollMs: number;
  /** Interval of the job reconciler and maintenance scan. */
  maintenanceIntervalMs: number;
  /**
   * `JOB_LEASE_MS`: how long a worker's claim of a ledger job holds without renewal (renewed every
   * third of it); a job of a worker that died is taken over once it has run out.
   */
  jobLeaseMs: number;
  /**
   * `JOB_LOCK_DURATION_MS`: the queue's (BullMQ's) lock on a delivered entry, and the interval of its
   * stall check; an entry of a worker that died is delivered again within about twice this.
   */
  jobLockDurationMs: number;
  /** `QUEUE_PREFIX`: the Redis key prefix of the job queues, so deployments sharing a Redis do not share queues. */
  queuePrefix: string;
  /** `GENERATION_CONCURRENCY`: model generations one API process runs at once; more turns wait. */
  generationConcurrency: number;
  /** `GENERATION_QUEUE_TIMEOUT_MS`: a turn waiting longer for a slot answers 503 `generation_queue_timeout`. */
  generationQueueTimeoutMs: number;
  /** `TURN_COMMIT_LOCK_TIMEOUT_MS`: a turn's commit waiting longer for a lock answers 503 `commit_busy`. */
  turnCommitLockTimeoutMs: number;
  /**
   * Client data (docs/decisions.md "Client data and session state"): `ENABLE_CLIENT_DATA` (default false: the
   * namespace and state routes and `session_state_writes` answer 503 `feature_unavailable`), and the
   * account's stored session state writes and their value bytes (`CLIENT_DATA_ACCOUNT_MAX_ITEMS`,
   * `CLIENT_DATA_ACCOUNT_MAX_BYTES`).
   */
  clientData: { enabled: boolean; accountMaxItems: number; accountMaxBytes: number };
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export const LLM_PROVIDERS = [
  'openai',
  'deepseek',
  'xai',
  'openai-compatible',
  'anthropic',
  'google',
] as const;

type Env = Record<string, string | undefined>;

export interface ConfigDefaults {
  /** `npm start` listens on 127.0.0.1, the image on 0.0.0.0. */
  host?: string;
}

export function loadConfig(env: Env, defaults: ConfigDefaults = {}): AppConfig {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^-?\d+$/.test(raw)) {
      problems.push(`${name} must be an integer, got "${raw}"`);
      return fallback;
    }
    const value = Number(raw);
    if (value < min || value > max) {
      problems.push(`${name} must be between ${min} and ${max}, got ${value}`);
      return fallback;
    }
    return value;
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const lower = raw.toLowerCase();
    if (['true', '1', 'yes'].includes(lower)) return true;
    if (['false', '0', 'no'].includes(lower)) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T | null): T | null => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };

  const url = (name: string, protocols: string[]): string | null => {
    const raw = read(name);
    if (raw === undefined) return null;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
      }
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };

  const pattern = (name: string, re: RegExp, fallback: string, allowed: string): string => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!re.test(raw)) problems.push(`${name} must be ${allowed}, got "${raw}"`);
    return raw;
  };

  const decodeKey = (value: string): Buffer | null => {
    const decoded = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : null;
    return decoded && decoded.length === 32 ? decoded : null;
  };

  let secretsMasterKey: Buffer | null = null;
  const masterKey = read('APP_SECRETS_MASTER_KEY');
  if (masterKey !== undefined) {
    secretsMasterKey = decodeKey(masterKey);
    if (!secretsMasterKey)
      problems.push('APP_SECRETS_MASTER_KEY must be 32 bytes encoded as base64 (44 characters)');
  }

  const secretsPreviousMasterKeys: Buffer[] = [];
  const previousKeys = read('APP_SECRETS_PREVIOUS_MASTER_KEYS');
  if (previousKeys !== undefined) {
    const items = previousKeys.split(',').map((item) => item.trim());
    items.forEach((item, index) => {
      const key = decodeKey(item);
      if (key) secretsPreviousMasterKeys.push(key);
      else
        problems.push(
          `APP_SECRETS_PREVIOUS_MASTER_KEYS item ${index + 1} must be 32 bytes encoded as base64 (44 characters)`,
        );
    });
    if (masterKey === undefined)
      problems.push('APP_SECRETS_PREVIOUS_MASTER_KEYS needs APP_SECRETS_MASTER_KEY (the key to rotate to)');
  }

  const bootstrapKey = read('BOOTSTRAP_ADMIN_API_KEY') ?? null;
  if (bootstrapKey !== null && bootstrapKey.length < 16) {
    problems.push('BOOTSTRAP_ADMIN_API_KEY must be at least 16 characters');
  }

  const host = read('HOST') ?? defaults.host ?? '127.0.0.1';

  const bodyLimitBytes = int('HTTP_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024);
  // The default budget grows with a raised limit; one set below the limit is an error.
  const bodyBufferBudgetBytes = int(
    'HTTP_BODY_BUFFER_BUDGET_BYTES',
    Math.max(32 * 1024 * 1024, bodyLimitBytes),
    1024,
  );
  if (bodyBufferBudgetBytes < bodyLimitBytes) {
    problems.push(
      `HTTP_BODY_BUFFER_BUDGET_BYTES must be at least HTTP_BODY_LIMIT_BYTES (${bodyLimitBytes}), got ${bodyBufferBudgetBytes}`,
    );
  }

  const config: AppConfig = {
    port: int('PORT', 3000, 0, 65535),
    host,
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    dataDir: read('HEARTH_DATA_DIR') ?? './data',
    bootstrapAdminApiKey: bootstrapKey,
    secretsMasterKey,
    secretsPreviousMasterKeys,
    accountMode: oneOf('ACCOUNT_MODE', ['single', 'multi'] as const, 'single') ?? 'single',
    allowPrivateBaseUrl: bool('ALLOW_PRIVATE_BASE_URL', false),
    enableAgentRuntimeWorker: bool('ENABLE_AGENT_RUNTIME_WORKER', false),
    enableRuntimeMaintenance: bool('ENABLE_RUNTIME_MAINTENANCE', false),
    enableTemporaryConversationCleanup: bool('ENABLE_TEMPORARY_CONVERSATION_CLEANUP', true),
    temporaryConversationCleanupGraceMs: int('TEMPORARY_CONVERSATION_CLEANUP_GRACE_MS', 0, 0),
    chatImportMaxBytes: int('CHAT_IMPORT_MAX_BYTES', 5_000_000, 1),
    chatExportSyncMaxMessages: int('CHAT_EXPORT_SYNC_MAX_MESSAGES', 2000, 1),
    chatExportArtifactTtlMs: int('CHAT_EXPORT_ARTIFACT_TTL_MS', 86_400_000, 1),
    llm: {
      provider: oneOf('LLM_PROVIDER', LLM_PROVIDERS, null),
      model: read('LLM_MODEL') ?? null,
      baseUrl: url('LLM_BASE_URL', ['http:', 'https:']),
      apiKey: read('LLM_API_KEY') ?? null,
    },
    dbMigrateOnStart: bool('DB_MIGRATE_ON_START', false),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info') ?? 'info',
    bodyLimitBytes,
    bodyBufferBudgetBytes,
    bodyMinBytesPerSecond: int('HTTP_BODY_MIN_BYTES_PER_SECOND', 16_384, 0),
    bodyReadGraceMs: int('HTTP_BODY_READ_GRACE_MS', 20_000, 1_000),
    sseHeartbeatMs: int('SSE_HEARTBEAT_MS', 15_000, 10),
    eventStreamEnabled: bool('EVENT_STREAM_ENABLED', true),
    eventStreamPollMs: int('EVENT_STREAM_POLL_MS', 5_000, 10),
    maintenanceIntervalMs: int('MAINTENANCE_INTERVAL_MS', 30_000, 10),
    jobLeaseMs: int('JOB_LEASE_MS', 60_000, 1_000),
    jobLockDurationMs: int('JOB_LOCK_DURATION_MS', 30_000, 500),
    queuePrefix: pattern('QUEUE_PREFIX', /^[\w.{}-]{1,64}$/, 'hearth', '1-64 of: letters digits _ . - { }'),
    generationConcurrency: int('GENERATION_CONCURRENCY', 64, 1),
    generationQueueTimeoutMs: int('GENERATION_QUEUE_TIMEOUT_MS', 30_000, 1),
    turnCommitLockTimeoutMs: int('TURN_COMMIT_LOCK_TIMEOUT_MS', 5_000, 1),
    clientData: {
      enabled: bool('ENABLE_CLIENT_DATA', false),
      accountMaxItems: int('CLIENT_DATA_ACCOUNT_MAX_ITEMS', 100_000, 1),
      accountMaxBytes: int('CLIENT_DATA_ACCOUNT_MAX_BYTES', 256 * 1024 * 1024, 1),
    },
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
