/**
 * The console's built assets (`services/console/dist`), which the API serves at /console:
 * `ensureConsoleBuilt` runs `npm run build -w @flowline/console` when there is no build or
 * when a source it is built from (the console, the client, the graph core, the live
 * vocabulary) is newer than it. Used by `npm start` and by the console's browser tests.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Directories and files the console bundle is built from, relative to the repository root. */
const SOURCES = [
  'services/console/src',
  'services/console/public',
  'services/console/index.html',
  'services/console/vite.config.ts',
  'services/console/package.json',
  'libs/client/src',
  'libs/graph/src',
  'libs/queue/src/protocol',
  // the editor bundles the samples
  'scripts/samples',
];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) {
    if (entry.endsWith('.test.ts') || entry.endsWith('.test.tsx') || entry === 'fixtures') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/** The console's dist directory. */
export function consoleDistDir(rootDir: string): string {
  return join(rootDir, 'services', 'console', 'dist');
}

/** Whether the build exists and is at least as new as every source it is built from. */
export function consoleBuildState(rootDir: string): { built: boolean; stale: boolean } {
  const index = join(consoleDistDir(rootDir), 'index.html');
  if (!existsSync(index)) return { built: false, stale: true };
  const builtAt = statSync(index).mtimeMs;
  const stale = SOURCES.some((s) => newestMtime(join(rootDir, s)) > builtAt);
  return { built: true, stale };
}

/** Builds the console unless its build is current; rejects when the build fails. */
export async function ensureConsoleBuilt(rootDir: string, log: (line: string) => void = () => undefined): Promise<void> {
  const state = consoleBuildState(rootDir);
  if (state.built && !state.stale) return;
  log(state.built ? 'the console changed since its build: building it again' : 'building the console (first start)');
  await new Promise<void>((resolve, reject) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    // a production build whoever asks: under vitest NODE_ENV is 'test', and Vite would bundle React's development build
    const child = spawn(npm, ['run', 'build', '-w', '@flowline/console'], { cwd: rootDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } });
    let output = '';
    for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`console build failed (exit ${code}):\n${output.slice(-4000)}`))));
  });
}
