import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('applies the CONTRACT.md defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: null,
      redisUrl: null,
      bootstrapAdminApiKey: null,
      secretsMasterKey: null,
      secretsPreviousMasterKeys: [],
      accountMode: 'single',
      allowPrivateBaseUrl: false,
      enableAgentRuntimeWorker: false,
      enableRuntimeMaintenance: false,
      enableTemporaryConversationCleanup: true,
      temporaryConversationCleanupGraceMs: 0,
      chatImportMaxBytes: 5_000_000,
      chatExportSyncMaxMessages: 2000,
      chatExportArtifactTtlMs: 86_400_000,
      llm: { provider: null, model: null, baseUrl: null, apiKey: null },
    });
  });

  it('reads every variable', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@h/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      BOOTSTRAP_ADMIN_API_KEY: 'bootstrap-key-0123456789',
      APP_SECRETS_MASTER_KEY: key,
      ACCOUNT_MODE: 'multi',
      ALLOW_PRIVATE_BASE_URL: 'true',
      ENABLE_AGENT_RUNTIME_WORKER: 'true',
      ENABLE_RUNTIME_MAINTENANCE: '1',
      ENABLE_TEMPORARY_CONVERSATION_CLEANUP: 'false',
      TEMPORARY_CONVERSATION_CLEANUP_GRACE_MS: '500',
      CHAT_IMPORT_MAX_BYTES: '100',
      CHAT_EXPORT_SYNC_MAX_MESSAGES: '10',
      CHAT_EXPORT_ARTIFACT_TTL_MS: '1000',
      LLM_PROVIDER: 'anthropic',
      LLM_MODEL: 'claude',
      LLM_BASE_URL: 'http://127.0.0.1:9999',
      LLM_API_KEY: 'sk',
    });
    expect(config.port).toBe(8080);
    expect(config.secretsMasterKey?.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(config.accountMode).toBe('multi');
    expect(config.enableRuntimeMaintenance).toBe(true);
    expect(config.enableTemporaryConversationCleanup).toBe(false);
    expect(config.llm).toEqual({
      provider: 'anthropic',
      model: 'claude',
      baseUrl: 'http://127.0.0.1:9999',
      apiKey: 'sk',
    });
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        ACCOUNT_MODE: 'many',
        APP_SECRETS_MASTER_KEY: 'short',
        ALLOW_PRIVATE_BASE_URL: 'maybe',
        DATABASE_URL: 'mysql://x',
        LLM_PROVIDER: 'nope',
        CHAT_IMPORT_MAX_BYTES: '0',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of [
      'PORT',
      'ACCOUNT_MODE',
      'APP_SECRETS_MASTER_KEY',
      'ALLOW_PRIVATE_BASE_URL',
      'DATABASE_URL',
      'LLM_PROVIDER',
      'CHAT_IMPORT_MAX_BYTES',
    ]) {
      expect(message).toContain(name);
    }
    expect((error as ConfigError).problems).toHaveLength(7);
  });

  it('enables the event stream by default and reads its switch and safety poll', () => {
    expect(loadConfig({})).toMatchObject({
      eventStreamEnabled: true,
      eventStreamPollMs: 5000,
      sseHeartbeatMs: 15_000,
    });
    expect(loadConfig({ EVENT_STREAM_ENABLED: 'false', EVENT_STREAM_POLL_MS: '250' })).toMatchObject({
      eventStreamEnabled: false,
      eventStreamPollMs: 250,
    });
    expect(() => loadConfig({ EVENT_STREAM_ENABLED: 'sometimes' })).toThrow(/EVENT_STREAM_ENABLED/);
    expect(() => loadConfig({ EVENT_STREAM_POLL_MS: '5' })).toThrow(/EVENT_STREAM_POLL_MS/);
  });

  it('reads the generation slots, their queue timeout and the commit lock timeout', () => {
    expect(loadConfig({})).toMatchObject({
      generationConcurrency: 64,
      generationQueueTimeoutMs: 30_000,
      turnCommitLockTimeoutMs: 5_000,
    });
    expect(
      loadConfig({
        GENERATION_CONCURRENCY: '1',
        GENERATION_QUEUE_TIMEOUT_MS: '250',
        TURN_COMMIT_LOCK_TIMEOUT_MS: '100',
      }),
    ).toMatchObject({
      generationConcurrency: 1,
      generationQueueTimeoutMs: 250,
      turnCommitLockTimeoutMs: 100,
    });
    expect(() => loadConfig({ GENERATION_CONCURRENCY: '0' })).toThrow(/GENERATION_CONCURRENCY/);
    expect(() => loadConfig({ GENERATION_QUEUE_TIMEOUT_MS: 'soon' })).toThrow(/GENERATION_QUEUE_TIMEOUT_MS/);
  });

  it('reads the client data switch and the account limits (at least 1)', () => {
    expect(loadConfig({}).clientData).toEqual({
      enabled: false,
      accountMaxItems: 100_000,
      accountMaxBytes: 256 * 1024 * 1024,
    });
    expect(
      loadConfig({
        ENABLE_CLIENT_DATA: 'true',
        CLIENT_DATA_ACCOUNT_MAX_ITEMS: '1',
        CLIENT_DATA_ACCOUNT_MAX_BYTES: '1',
      }).clientData,
    ).toEqual({ enabled: true, accountMaxItems: 1, accountMaxBytes: 1 });
    expect(() => loadConfig({ ENABLE_CLIENT_DATA: 'maybe' })).toThrow(/ENABLE_CLIENT_DATA/);
    expect(() => loadConfig({ CLIENT_DATA_ACCOUNT_MAX_ITEMS: '0' })).toThrow(/CLIENT_DATA_ACCOUNT_MAX_ITEMS/);
    expect(() => loadConfig({ CLIENT_DATA_ACCOUNT_MAX_BYTES: '0' })).toThrow(/CLIENT_DATA_ACCOUNT_MAX_BYTES/);
  });

  it('reads the job lease and the queue lock duration (defaults 60 s and 30 s)', () => {
    expect(loadConfig({})).toMatchObject({ jobLeaseMs: 60_000, jobLockDurationMs: 30_000 });
    expect(loadConfig({ JOB_LEASE_MS: '4000', JOB_LOCK_DURATION_MS: '1000' })).toMatchObject({
      jobLeaseMs: 4_000,
      jobLockDurationMs: 1_000,
    });
    expect(() => loadConfig({ JOB_LEASE_MS: '999' })).toThrow(/JOB_LEASE_MS/);
    // The minimums: 1 s of lease, 500 ms of lock, and one less is refused.
    expect(loadConfig({ JOB_LEASE_MS: '1000', JOB_LOCK_DURATION_MS: '500' })).toMatchObject({
      jobLeaseMs: 1_000,
      jobLockDurationMs: 500,
    });
    expect(() => loadConfig({ JOB_LOCK_DURATION_MS: '499' })).toThrow(/JOB_LOCK_DURATION_MS/);
    expect(() => loadConfig({ JOB_LOCK_DURATION_MS: 'short' })).toThrow(/JOB_LOCK_DURATION_MS/);
  });

  it('reads the body buffer budget: default 32 MiB (or the body limit, if larger), never below the limit', () => {
    const MiB = 1024 * 1024;
    expect(loadConfig({})).toMatchObject({ bodyLimitBytes: 10 * MiB, bodyBufferBudgetBytes: 32 * MiB });
    expect(
      loadConfig({ HTTP_BODY_LIMIT_BYTES: String(MiB), HTTP_BODY_BUFFER_BUDGET_BYTES: String(2 * MiB) }),
    ).toMatchObject({ bodyLimitBytes: MiB, bodyBufferBudgetBytes: 2 * MiB });
    // Exactly the limit is allowed (one body at a time).
    expect(
      loadConfig({ HTTP_BODY_LIMIT_BYTES: String(MiB), HTTP_BODY_BUFFER_BUDGET_BYTES: String(MiB) })
        .bodyBufferBudgetBytes,
    ).toBe(MiB);
    // A raised limit raises the default budget with it.
    expect(loadConfig({ HTTP_BODY_LIMIT_BYTES: String(100 * MiB) }).bodyBufferBudgetBytes).toBe(100 * MiB);
    expect(() =>
      loadConfig({ HTTP_BODY_LIMIT_BYTES: String(2 * MiB), HTTP_BODY_BUFFER_BUDGET_BYTES: String(MiB) }),
    ).toThrow(/HTTP_BODY_BUFFER_BUDGET_BYTES must be at least HTTP_BODY_LIMIT_BYTES/);
    expect(() => loadConfig({ HTTP_BODY_BUFFER_BUDGET_BYTES: 'lots' })).toThrow(
      /HTTP_BODY_BUFFER_BUDGET_BYTES/,
    );
  });

  it('reads the minimum body pace: 16 KiB/s after 20 s by default, 0 turns it off, the grace is at least 1 s', () => {
    expect(loadConfig({})).toMatchObject({ bodyMinBytesPerSecond: 16_384, bodyReadGraceMs: 20_000 });
    expect(
      loadConfig({ HTTP_BODY_MIN_BYTES_PER_SECOND: '0', HTTP_BODY_READ_GRACE_MS: '1000' }),
    ).toMatchObject({ bodyMinBytesPerSecond: 0, bodyReadGraceMs: 1000 });
    expect(() => loadConfig({ HTTP_BODY_READ_GRACE_MS: '999' })).toThrow(/HTTP_BODY_READ_GRACE_MS/);
    expect(() => loadConfig({ HTTP_BODY_MIN_BYTES_PER_SECOND: '-1' })).toThrow(
      /HTTP_BODY_MIN_BYTES_PER_SECOND/,
    );
  });

  it('reads the queue key prefix, default hearth, and rejects a malformed one', () => {
    expect(loadConfig({}).queuePrefix).toBe('hearth');
    expect(loadConfig({ QUEUE_PREFIX: 'hearth-test_01' }).queuePrefix).toBe('hearth-test_01');
    expect(loadConfig({ QUEUE_PREFIX: 'x'.repeat(64) }).queuePrefix).toHaveLength(64);
    expect(() => loadConfig({ QUEUE_PREFIX: 'x'.repeat(65) })).toThrow(/QUEUE_PREFIX/);
    expect(() => loadConfig({ QUEUE_PREFIX: 'has space' })).toThrow(/QUEUE_PREFIX/);
  });

  it('reads the previous secrets master keys for rotation, each 32 bytes base64', () => {
    const current = Buffer.alloc(32, 1).toString('base64');
    const old1 = Buffer.alloc(32, 2).toString('base64');
    const old2 = Buffer.alloc(32, 3).toString('base64url');
    expect(loadConfig({}).secretsPreviousMasterKeys).toEqual([]);
    const config = loadConfig({
      APP_SECRETS_MASTER_KEY: current,
      APP_SECRETS_PREVIOUS_MASTER_KEYS: ` ${old1} , ${old2}`,
    });
    expect(config.secretsPreviousMasterKeys.map((k) => k[0])).toEqual([2, 3]);
    expect(config.secretsPreviousMasterKeys.every((k) => k.length === 32)).toBe(true);
  });

  it('refuses a master key of the wrong length and names the variable, never the value', () => {
    const short = Buffer.alloc(31, 9).toString('base64');
    const long = Buffer.alloc(33, 9).toString('base64');
    for (const value of [short, long, 'not base64!']) {
      let error: unknown;
      try {
        loadConfig({ APP_SECRETS_MASTER_KEY: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain('APP_SECRETS_MASTER_KEY must be 32 bytes');
      expect((error as ConfigError).message).not.toContain(value);
    }
  });

  it('refuses a bad previous key, and previous keys without a current one', () => {
    const current = Buffer.alloc(32, 1).toString('base64');
    const bad = Buffer.alloc(16, 4).toString('base64');
    let error: unknown;
    try {
      loadConfig({ APP_SECRETS_MASTER_KEY: current, APP_SECRETS_PREVIOUS_MASTER_KEYS: `${current},${bad}` });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      'APP_SECRETS_PREVIOUS_MASTER_KEYS item 2 must be 32 bytes encoded as base64 (44 characters)',
    ]);
    expect((error as ConfigError).message).not.toContain(bad);
    expect(() => loadConfig({ APP_SECRETS_PREVIOUS_MASTER_KEYS: current })).toThrow(
      /APP_SECRETS_PREVIOUS_MASTER_KEYS needs APP_SECRETS_MASTER_KEY/,
    );
  });

  it('reads ALLOW_PRIVATE_BASE_URL', () => {
    expect(loadConfig({ ALLOW_PRIVATE_BASE_URL: 'true' }).allowPrivateBaseUrl).toBe(true);
    expect(loadConfig({ ALLOW_PRIVATE_BASE_URL: 'false' }).allowPrivateBaseUrl).toBe(false);
  });

  it('uses the host default given by the entry point', () => {
    expect(loadConfig({}, { host: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1' }, { host: '0.0.0.0' }).host).toBe('::1');
  });
});
