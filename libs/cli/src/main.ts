/**
 * `flowline`: the command line over `@flowline/client`. `main(argv, io)` parses `argv`
 * (the arguments after the program name), runs one command, and returns its exit code —
 * it never calls `process.exit`, so tests run it in-process.
 */
import { Command, CommanderError } from 'commander';
import { registerApiKeys } from './commands/api-keys';
import { registerDecide } from './commands/decide';
import { registerDefinitions } from './commands/definitions';
import { registerEvents } from './commands/events';
import { registerRuns } from './commands/runs';
import { registerSchedules } from './commands/schedules';
import { registerTools } from './commands/tools';
import { reportError } from './errors';
import { EXIT, type CliIo, type ExitCode } from './io';
import { createSession, DEFAULT_URL, type Wrap } from './session';

/** commander's codes for help or version output asked for on purpose (exit 0). */
const ASKED_FOR_OUTPUT: ReadonlySet<string> = new Set(['commander.helpDisplayed', 'commander.version']);

/** Runs the command line `argv` and resolves with its exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const program = new Command('flowline');
  const session = createSession(program, io);
  let code: ExitCode = EXIT.ok;
  const wrap: Wrap =
    (body) =>
    async (...args) => {
      code = await body(...args);
    };

  program
    .description('Flowline from the command line: definitions, runs, schedules, decisions, tools, events, webhooks, api keys')
    .version('0.1.0')
    .option('--url <url>', 'API base URL (env FLOWLINE_URL)', io.env?.FLOWLINE_URL ?? DEFAULT_URL)
    .option('--key <key>', 'API key (env FLOWLINE_API_KEY)')
    .option('--json', 'print the API documents as JSON')
    // Settings below are inherited by every sub-command added after them.
    .exitOverride()
    .configureOutput({
      writeOut: (t) => io.stdout(t),
      writeErr: (t) => io.stderr(t),
      outputError: (t, write) => write(t.replace(/^error: /, 'UsageError: ')),
    })
    .showSuggestionAfterError();
  registerDefinitions(program, session, wrap);
  registerRuns(program, session, wrap);
  registerSchedules(program, session, wrap);
  registerDecide(program, session, wrap);
  registerTools(program, session, wrap);
  registerEvents(program, session, wrap);
  registerApiKeys(program, session, wrap);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return ASKED_FOR_OUTPUT.has(err.code) ? EXIT.ok : EXIT.usage;
    return reportError(err, io);
  } finally {
    session.close();
  }
}
