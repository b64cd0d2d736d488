import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The repository's real eslint.config.js, applied to deliberately bad files: each boundary rule
 * must fire (a rule that cannot resolve an import passes everything silently). Fixtures live in
 * lint/fixtures (ignored by `npm run lint`, outside the TypeScript project) and are linted as if
 * they sat at the path whose zone they break. Type-aware linting is off here only: it needs the
 * file in the TypeScript project, and no boundary rule is type-aware.
 */
const root = path.resolve(import.meta.dirname, '../..');
const fixture = (name: string): string => readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8');

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({
    cwd: root,
    ignore: false,
    overrideConfig: [{
      files: ['**/*.ts'],
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    }],
  });
});

async function messagesOf(text: string, filePath: string): Promise<{ ruleId: string | null; line: number; message: string }[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(root, filePath) });
  return (result?.messages ?? []).map(({ ruleId, line, message }) => ({ ruleId, line, message }));
}

const LINT_TIMEOUT_MS = 180_000; // the first lint loads the parser and resolver; the host is shared

describe('the lint configuration', () => {
  it('refuses a clock, performance, crypto, Math.random and a node builtin in libs/graph', async () => {
    const messages = await messagesOf(fixture('graph-impure.ts'), 'libs/graph/src/lint-fixture.ts');
    expect(messages.map((m) => `${m.line} ${m.ruleId}`).sort()).toEqual([
      '2 no-restricted-imports',
      '4 no-restricted-globals',
      '5 no-restricted-globals',
      '6 no-restricted-globals',
      '7 no-restricted-properties',
    ]);
  }, LINT_TIMEOUT_MS);

  it('accepts pure code in libs/graph (the purity rules do not fire on everything)', async () => {
    expect(await messagesOf(fixture('graph-pure.ts'), 'libs/graph/src/lint-fixture.ts')).toEqual([]);
  }, LINT_TIMEOUT_MS);

  it('refuses BullMQ, ioredis and the transport entry of @flowline/queue in libs/client', async () => {
    const messages = await messagesOf(fixture('client-transport.ts'), 'libs/client/src/lint-fixture.ts');
    expect(messages.map((m) => `${m.line} ${m.ruleId}`)).toEqual([
      '2 no-restricted-imports',
      '3 no-restricted-imports',
      '4 no-restricted-imports',
    ]);
  }, LINT_TIMEOUT_MS);

  it('refuses BullMQ, ioredis, node builtins and the lane code in the queue protocol', async () => {
    const messages = await messagesOf(fixture('protocol-transport.ts'), 'libs/queue/src/protocol/lint-fixture.ts');
    expect(messages.map((m) => `${m.line} ${m.ruleId}`)).toEqual([
      '2 no-restricted-imports',
      '3 no-restricted-imports',
      '4 no-restricted-imports',
      '5 no-restricted-imports',
    ]);
  }, LINT_TIMEOUT_MS);

  it('refuses a lib importing a service through an extensionless relative path', async () => {
    const messages = await messagesOf(fixture('lib-imports-service.ts'), 'libs/db/src/lint-fixture.ts');
    expect(messages).toEqual([expect.objectContaining({ line: 2, ruleId: 'import-x/no-restricted-paths', message: expect.stringContaining('A lib never imports a service.') })]);
  }, LINT_TIMEOUT_MS);

  it('refuses a service importing another service', async () => {
    const messages = await messagesOf(fixture('service-imports-service.ts'), 'services/api/src/lint-fixture.ts');
    expect(messages).toEqual([expect.objectContaining({ line: 2, ruleId: 'import-x/no-restricted-paths', message: expect.stringContaining('Services never import each other.') })]);
  }, LINT_TIMEOUT_MS);

  it("refuses a package's test reaching another package's src, its test harness, tests/ or scripts/, and accepts its exports map", async () => {
    const messages = await messagesOf(fixture('test-reaches-across.ts'), 'services/api/test/lint-fixture.test.ts');
    expect(messages.map((m) => `${m.line} ${m.ruleId}`)).toEqual([
      '3 import-x/no-restricted-paths',
      '4 import-x/no-restricted-paths',
      '5 import-x/no-restricted-paths',
      '6 import-x/no-restricted-paths',
    ]);
  }, LINT_TIMEOUT_MS);

  it('refuses a two-file import cycle of extensionless imports', async () => {
    const file = 'tests/lint/fixtures/cycle/a.ts';
    const messages = await messagesOf(readFileSync(path.join(root, file), 'utf8'), file);
    expect(messages).toEqual([expect.objectContaining({ line: 2, ruleId: 'import-x/no-cycle' })]);
  }, LINT_TIMEOUT_MS);
});
