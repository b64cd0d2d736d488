/**
 * What the production image holds, in one place for infra/Dockerfile and its test.
 *
 * `tsx scripts/image-files.ts <out>` (in the Dockerfile's build stage, after
 * `npm run build`) writes:
 * - `<out>/manifests`: the root package.json and lockfile plus the runtime workspaces'
 *   package.json files, with the workspace list narrowed to {@link RUNTIME_WORKSPACES}
 *   and every `devDependencies` removed. The `prod-deps` stage runs
 *   {@link PRODUCTION_INSTALL} on them, so node_modules holds the services' production
 *   dependencies only (a plain `npm ci --omit=dev` also installs what the test-only
 *   workspaces need, e.g. testcontainers, because workspaces are never omitted).
 * - `<out>/app`: those manifests again, each runtime workspace's compiled `dist/`, the
 *   Postgres migrations (libs/db/drizzle), the SQL functions (libs/db/sql/functions) and the console's built assets. No TypeScript.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The workspaces the services need at run time (the console ships as built assets). */
export const RUNTIME_WORKSPACES = [
  'libs/graph',
  'libs/db',
  'libs/queue',
  'libs/runtime',
  'libs/tools',
  'services/api',
  'services/dispatcher',
  'services/worker-tool',
  'services/worker-llm',
] as const;

/** The services the image runs: `node services/<name>/dist/main.js`. */
export const IMAGE_SERVICES = ['api', 'dispatcher', 'worker-tool', 'worker-llm'] as const;

/** The prod-deps stage's install command (infra/Dockerfile runs exactly this). */
export const PRODUCTION_INSTALL = 'npm install --omit=dev --no-audit --no-fund';

/** Folders copied as they are, when present (the console's build is optional outside the image). */
const DATA_DIRS = ['libs/db/drizzle', 'libs/db/sql/functions', 'services/console/dist'] as const;

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Writes the production manifests (see the file header) under `out`. */
export function writeManifests(rootDir: string, out: string): void {
  const root = readJson(join(rootDir, 'package.json'));
  delete root.devDependencies;
  // the production install runs no lifecycle script of ours (build scripts need dev tools)
  delete root.scripts;
  writeJson(join(out, 'package.json'), { ...root, workspaces: [...RUNTIME_WORKSPACES] });
  cpSync(join(rootDir, 'package-lock.json'), join(out, 'package-lock.json'));
  for (const ws of RUNTIME_WORKSPACES) {
    const manifest = readJson(join(rootDir, ws, 'package.json'));
    delete manifest.devDependencies;
    delete manifest.scripts;
    writeJson(join(out, ws, 'package.json'), manifest);
  }
}

/** Writes the runtime files (see the file header) under `out`; throws when a workspace is not built. */
export function writeAppFiles(rootDir: string, out: string): void {
  writeManifests(rootDir, out);
  for (const ws of RUNTIME_WORKSPACES) {
    const dist = join(rootDir, ws, 'dist');
    if (!existsSync(dist)) throw new Error(`${ws}/dist is missing: run npm run build first`);
    cpSync(dist, join(out, ws, 'dist'), { recursive: true });
  }
  for (const dir of DATA_DIRS) {
    if (existsSync(join(rootDir, dir))) cpSync(join(rootDir, dir), join(out, dir), { recursive: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: tsx scripts/image-files.ts <out>');
    process.exit(1);
  }
  const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
  rmSync(out, { recursive: true, force: true });
  writeManifests(rootDir, join(out, 'manifests'));
  writeAppFiles(rootDir, join(out, 'app'));
  console.log(`image files written to ${out}`);
}
