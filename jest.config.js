/** Three kinds of tests (ARCHITECTURE.md "Tests"): pure specs next to the code, integration and e2e under test/. */
const moduleNameMapper = {
  '^@hearth/(domain|persistence|permissions|platform|app)$': '<rootDir>/libs/$1/src/index.ts',
  '^@hearth/(domain|persistence|permissions|platform|app)/(.*)$': '<rootDir>/libs/$1/src/$2',
};
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: { warnOnly: false } }],
};
const common = {
  testEnvironment: 'node',
  rootDir: '.',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform,
  moduleNameMapper,
};

module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/apps', '<rootDir>/libs'],
      testRegex: '.*\\.spec\\.ts$',
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testRegex: 'test/(integration|e2e|fault)/.*\\.test\\.ts$',
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  maxWorkers: 2,
  // Each test file loads its own copy of the modules, and a worker's heap grew to ~2.9 GB over a full
  // run; a worker that big outlived Jest's 500 ms exit grace ("failed to exit gracefully"). A worker
  // past 1 GB after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  // Top level: a per-project testTimeout is ignored when several projects run (jest #9759).
  testTimeout: 120000,
};
