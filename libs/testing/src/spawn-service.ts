/**
 * A service process (its `src/main.ts` under tsx, or its compiled `dist/main.js`) spawned for a test, with everything it
 * printed kept, for tests of what a real process does at boot, on a signal or on a fault.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait-for';

/** A spawned service process. */
export interface ServiceProcess {
  child: ChildProcess;
  /** resolves with the exit code (null when a signal ended it) */
  exited: Promise<number | null>;
  /** stdout and stderr so far, interleaved */
  output(): string;
}

export interface SpawnServiceOptions {
  /** the service's folder (holds src/main.ts) */
  cwd: string;
  /** added to the test process's environment */
  env: Record<string, string>;
  /** waits until the output contains this text; null does not wait */
  readyText: string | null;
  /** @default 30000 */
  readyTimeoutMs?: number;
  /** node's arguments; `['dist/main.js']` runs the compiled service @default ['--import', 'tsx', 'src/main.ts'] */
  args?: string[];
}

/** Spawns `node --import tsx src/main.ts` (or `o.args`) in `cwd` (LOG_LEVEL info unless `env` says otherwise). */
export async function spawnService(o: SpawnServiceOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, o.args ?? ['--import', 'tsx', 'src/main.ts'], {
    cwd: o.cwd,
    env: { ...process.env, LOG_LEVEL: 'info', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const readyText = o.readyText;
  if (readyText !== null) {
    await waitFor(() => output.includes(readyText), { timeoutMs: o.readyTimeoutMs ?? 30_000, description: `${readyText}; output so far: ${output}` });
  }
  return { child, exited, output: () => output };
}
