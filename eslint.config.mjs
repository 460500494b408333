import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Globals of the plain CommonJS Node scripts (bench/, scripts/). */
const nodeGlobals = Object.fromEntries(
  [
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'process',
    'console',
    'Buffer',
    'URL',
    'performance',
    'fetch',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'queueMicrotask',
    'AbortController',
    'structuredClone',
    'globalThis',
  ].map((name) => [name, ['module', 'exports'].includes(name) ? 'writable' : 'readonly']),
);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/results/**',
      '**/*.js',
      // The plain Node scripts are linted too (as CommonJS, below).
      '!bench/**/*.js',
      '!scripts/**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['bench/**/*.js', 'scripts/**/*.js'],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2024, globals: nodeGlobals },
    rules: {
      // require() is the module system of these CommonJS scripts, not a TypeScript import style.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
