/**
 * The generated reference pages (graph, options, REST API) are what `npm run docs:gen`
 * writes today, and the options generator covers every config schema a service loads.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../scripts/docs/markdown-read';
import { SERVICE_OPTIONS } from '../../scripts/docs/options-reference';
import { DOCS_GEN_COMMAND, GENERATED_PAGES } from '../../scripts/docs/pages';

function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  in the file: ${x[i] ?? '(end of file)'}\n  generated:   ${y[i] ?? '(end of file)'}`;
  }
  return '';
}

describe('the generated reference pages', () => {
  for (const p of GENERATED_PAGES) {
    it(`${p.path} is what ${DOCS_GEN_COMMAND} writes`, async () => {
      const generated = await p.render();
      let current: string;
      try {
        current = readFileSync(join(REPO_ROOT, p.path), 'utf8');
      } catch {
        current = '(missing)';
      }
      if (current !== generated) {
        expect.fail(`${p.path} is stale: run \`${DOCS_GEN_COMMAND}\` and commit the result.\nFirst difference at ${firstDifference(current, generated)}`);
      }
    }, 60_000);
  }

  it('documents every config schema a service passes to loadConfig', () => {
    for (const service of readdirSync(join(REPO_ROOT, 'services'))) {
      let main: string;
      try {
        main = readFileSync(join(REPO_ROOT, 'services', service, 'src', 'main.ts'), 'utf8');
      } catch {
        continue; // not a process (the console is served by the API)
      }
      const loaded = [...main.matchAll(/loadConfig\(\s*(\w+)/g)].map((m) => m[1]!);
      const listed = Object.keys(SERVICE_OPTIONS.find((s) => s.service === service)?.schemas ?? {});
      const missing = loaded.filter((name) => !listed.includes(name));
      expect(missing, `services/${service} loads ${missing.join(', ')}: add it to SERVICE_OPTIONS in scripts/docs/options-reference.ts, then run \`${DOCS_GEN_COMMAND}\``).toEqual([]);
    }
  });
});
