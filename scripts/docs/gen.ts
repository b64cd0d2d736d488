/**
 * `npm run docs:gen`: writes the generated reference pages (graph, options, REST API).
 * `npm run docs:gen -- --check` writes nothing and exits 1 when a page is stale.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './markdown-read';
import { DOCS_GEN_COMMAND, GENERATED_PAGES } from './pages';

const check = process.argv.includes('--check');
let stale = 0;
for (const p of GENERATED_PAGES) {
  const file = join(REPO_ROOT, p.path);
  const text = await p.render();
  let current: string | null;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = null;
  }
  if (current === text) {
    process.stdout.write(`${p.path}: up to date\n`);
  } else if (check) {
    stale++;
    process.stdout.write(`${p.path}: stale (run \`${DOCS_GEN_COMMAND}\`)\n`);
  } else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    process.stdout.write(`${p.path}: written\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
