// Lint rules that hold the architecture of CONVENTIONS.md without anyone remembering:
// libs/graph is pure (ajv, re2js and liquidjs only; no clock, no randomness), no import cycles, no
// deep imports across packages, packages reach each other only through their exports maps, the
// browser client reaches neither BullMQ nor ioredis, no floating promises.
// tests/lint/lint-rules.test.ts lints a deliberately bad fixture for each rule with this config.
import fs from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';

const root = import.meta.dirname;

/**
 * The workspace packages (libs/*, services/*) and, for each, the files its `exports` map makes
 * public: the only files another package may import. A service declares no exports.
 */
const packages = ['libs', 'services'].flatMap((dir) =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(root, dir, e.name, 'package.json')))
    .map((e) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(root, dir, e.name, 'package.json'), 'utf8'));
      const exportsMap = typeof manifest.exports === 'string' ? { '.': manifest.exports } : (manifest.exports ?? {});
      return { dir: `./${dir}/${e.name}`, kind: dir, publicFiles: Object.values(exportsMap).filter((v) => typeof v === 'string') };
    }));

/**
 * `import-x/no-restricted-paths` zones over resolved paths (the resolver below makes them see
 * extensionless TypeScript imports): a lib never imports a service; services never import each
 * other; a package reaches another lib only through that lib's exports map (not its src files
 * nor its test harness); a package's code and tests never import the black-box suites (tests/)
 * or the repository scripts (scripts/): shared harnesses live in libs/testing.
 */
const zoneList = packages.flatMap((target) => [
  ...packages.filter((from) => from.dir !== target.dir).map((from) => from.kind === 'services'
    ? { target: target.dir, from: from.dir, message: target.kind === 'libs' ? 'A lib never imports a service.' : 'Services never import each other.' }
    : { target: target.dir, from: from.dir, except: from.publicFiles, message: 'Import another package through its exports map (@flowline/<name>), never its src files or test harness.' }),
  { target: target.dir, from: './tests', message: 'A package never imports the black-box suites of tests/: shared harnesses live in libs/testing.' },
  { target: target.dir, from: './scripts', message: 'A package never imports the repository scripts: shared harnesses live in libs/testing.' },
]);

const zones = ['error', { basePath: root, zones: zoneList }];

const deepImport = {
  // subpaths a package's exports map declares are public (`@flowline/queue/protocol`: names,
  // schemas, the live vocabulary and the signal publisher without BullMQ/ioredis;
  // `@flowline/queue/live-wire`: the live channel's names and guards without zod, for browser code;
  // `@flowline/client/rest`: the REST half alone, for the console's first script;
  // `@flowline/graph/fixtures`: the canonical eight-node graph the tests of every package submit)
  group: ['@flowline/*/*', '!@flowline/queue/protocol', '!@flowline/queue/live-wire', '!@flowline/client/rest', '!@flowline/graph/fixtures'],
  message: 'Import a package through its public surface (src/index.ts or a declared export), never a deep path.',
};

export default tseslint.config(
  // tests/lint/fixtures/ hold deliberately bad files that tests/lint/lint-rules.test.ts lints with ignore: false
  { ignores: ['eslint.config.js', '**/node_modules/**', '**/dist/**', '**/coverage/**', 'tests/bench/peers/**', 'libs/db/drizzle/**', 'tests/lint/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      // import-x parses only files of these extensions when it follows an import (no-cycle
      // walks their imports): TypeScript files included, with the TypeScript parser.
      'import-x/extensions': ['.ts', '.tsx', '.cts', '.mts', '.js', '.jsx', '.cjs', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx', '.cts', '.mts'] },
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      // unrs-resolver with TypeScript's extensions and conditions, so no-cycle and
      // no-restricted-paths follow extensionless relative imports and workspace packages
      // (symlinked in node_modules, resolved to their real paths under libs/ and services/).
      'import-x/resolver-next': [createNodeResolver({
        extensions: ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.json', '.node'],
        conditionNames: ['types', 'import', 'node', 'default'],
      })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': ['error', { maxDepth: 10, ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'no-restricted-imports': ['error', { patterns: [deepImport] }],
    },
  },
  {
    // The pure core: no IO, no clock, no node builtins, nothing but ajv, re2js (the
    // linear-time engine user regular expressions run on; pure JS, no native build) and
    // liquidjs (the template engine, configured as a sandbox in src/template/engine.ts), and
    // croner (cron field matching for schedule slots: given a time, it answers the next match
    // and reads no clock; src/schedule/slots.ts).
    files: ['libs/graph/src/**/*.ts'],
    ignores: ['libs/graph/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          deepImport,
          { regex: '^(?!(ajv|ajv-formats|re2js|liquidjs|croner)(/|$)|\\.{1,2}/)', message: 'libs/graph is pure: it imports only ajv, re2js, liquidjs, croner (its declared dependencies) and its own files.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'libs/graph is pure: no process access.' },
        { name: 'setTimeout', message: 'libs/graph is pure: time is an argument.' },
        { name: 'setInterval', message: 'libs/graph is pure: time is an argument.' },
        { name: 'fetch', message: 'libs/graph is pure: no IO.' },
        { name: 'Date', message: 'libs/graph is pure: time is an argument (an epoch-ms number or an ISO string).' },
        { name: 'performance', message: 'libs/graph is pure: time is an argument.' },
        { name: 'crypto', message: 'libs/graph is pure: ids and randomness are arguments.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Math', property: 'random', message: 'libs/graph is pure: randomness is an argument.' },
        { object: 'globalThis', property: 'Date', message: 'libs/graph is pure: time is an argument.' },
        { object: 'globalThis', property: 'performance', message: 'libs/graph is pure: time is an argument.' },
        { object: 'globalThis', property: 'crypto', message: 'libs/graph is pure: ids and randomness are arguments.' },
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
        paths: [
          { name: '@flowline/queue', message: 'browser-safe: import @flowline/queue/protocol (no BullMQ, no ioredis).' },
          { name: 'bullmq', message: 'browser-safe: the client never reaches BullMQ.' },
          { name: 'ioredis', message: 'browser-safe: the client never reaches ioredis.' },
        ],
        patterns: [deepImport, { regex: '^node:', message: 'browser-safe: no node builtins in the client.' }],
      }],
    },
  },
  {
    // The queue protocol (libs/queue/src/protocol) is transport-free: the browser client imports
    // it, so neither BullMQ nor ioredis nor node builtins nor the lane code of ../transport.
    files: ['libs/queue/src/protocol/**/*.ts'],
    ignores: ['libs/queue/src/protocol/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          { name: 'bullmq', message: 'the queue protocol is transport-free: BullMQ code lives in libs/queue/src/transport.' },
          { name: 'ioredis', message: 'the queue protocol is transport-free: it takes a connection by its shape (SignalConnection).' },
        ],
        patterns: [
          deepImport,
          { regex: '^node:', message: 'the queue protocol is browser-safe: no node builtins.' },
          { regex: '^\\.\\./transport(/|$)', message: 'the queue protocol never imports the BullMQ lane code.' },
        ],
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
    // Package boundaries (zones above).
    files: ['libs/**/*.{ts,tsx}', 'services/**/*.{ts,tsx}'],
    rules: { 'import-x/no-restricted-paths': zones },
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', 'tests/**/*.ts', 'libs/testing/**/*.ts', 'services/console/e2e/**/*.ts', 'services/console/bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
