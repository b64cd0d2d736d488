// Lint rules that hold the architecture of CONVENTIONS.md without anyone remembering:
// libs/graph is pure (zod, ajv and re2js only), no import cycles, no deep imports across
// packages, no floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';

const deepImport = {
  // subpaths a package's exports map declares are public (`@flowline/queue/live`: the live
  // channel's vocabulary without BullMQ/ioredis, for browser code)
  group: ['@flowline/*/*', '!@flowline/queue/live'],
  message: 'Import a package through its public surface (src/index.ts or a declared export), never a deep path.',
};

export default tseslint.config(
  { ignores: ['eslint.config.js', '**/node_modules/**', '**/dist/**', '**/coverage/**', 'tests/bench/peers/**', 'libs/db/drizzle/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'import-x/no-self-import': 'error',
      'no-restricted-imports': ['error', { patterns: [deepImport] }],
    },
  },
  {
    // The pure core: no IO, no clock, no node builtins, nothing but zod, ajv and re2js (the
    // linear-time engine user regular expressions run on; pure JS, no native build).
    files: ['libs/graph/src/**/*.ts'],
    ignores: ['libs/graph/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          deepImport,
          { regex: '^(?!(zod|ajv|ajv-formats|re2js)(/|$)|\\.{1,2}/)', message: 'libs/graph is pure: it imports only zod, ajv, re2js and its own files.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'libs/graph is pure: no process access.' },
        { name: 'setTimeout', message: 'libs/graph is pure: time is an argument.' },
        { name: 'setInterval', message: 'libs/graph is pure: time is an argument.' },
        { name: 'fetch', message: 'libs/graph is pure: no IO.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'libs/graph is pure: time is an argument.' },
        { object: 'Math', property: 'random', message: 'libs/graph is pure: randomness is an argument.' },
      ],
    },
  },
  {
    // The typed client runs in browsers (the console): nothing node-only, so from libs/queue
    // only its live vocabulary, and no node builtins.
    files: ['libs/client/src/**/*.ts'],
    ignores: ['libs/client/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: '@flowline/queue', message: 'browser-safe: import @flowline/queue/live (no BullMQ, no ioredis).' }],
        patterns: [deepImport, { regex: '^node:', message: 'browser-safe: no node builtins in the client.' }],
      }],
    },
  },
  {
    // build config: import-x cannot resolve @vitejs/plugin-react's exports map; a config has no cycles to find
    files: ['services/console/*.config.ts'],
    rules: { 'import-x/no-cycle': 'off' },
  },
  {
    // The console (React): hooks rules.
    files: ['services/console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // Libraries never import services; services never import each other.
    files: ['libs/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: [{ target: './libs', from: './services', message: 'A lib never imports a service.' }] }],
    },
  },
  {
    files: ['services/*/src/**/*.{ts,tsx}'],
    rules: {
      'import-x/no-restricted-paths': ['error', {
        zones: ['api', 'console', 'dispatcher', 'worker-llm', 'worker-tool'].map((s) => ({
          target: `./services/${s}`,
          from: './services',
          except: [`./${s}`],
          message: 'Services never import each other.',
        })),
      }],
    },
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', 'tests/**/*.ts', 'libs/testing/**/*.ts', 'services/console/e2e/**/*.ts', 'services/console/bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
