/** Where the CLI writes and what it reads from its environment; `main` is handed one. */
export interface CliIo {
  /** standard output (results) */
  stdout(text: string): void;
  /** standard error (refusals, usage, progress notes) */
  stderr(text: string): void;
  /** environment (FLOWLINE_URL, FLOWLINE_API_KEY); none when omitted */
  env?: Readonly<Record<string, string | undefined>>;
  /** directory relative file arguments resolve against (defaults to the process's) */
  cwd?: string;
}

/** Exit codes: 0 success, 1 refused (by the API, an invalid graph, a run that did not complete), 2 usage. */
export const EXIT = { ok: 0, refused: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
