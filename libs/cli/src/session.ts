/**
 * What every command is handed: the io, the global options (`--url`, `--key`, `--json`)
 * and one lazily created `@flowline/client` — the only way the CLI talks to the API.
 */
import type { Command } from 'commander';
import { createClient, type FlowlineClient } from '@flowline/client';
import { ConnectionError } from './errors';
import { pretty, table, type Cell } from './format';
import type { CliIo, ExitCode } from './io';

/** The API the CLI talks to when neither `--url` nor FLOWLINE_URL says otherwise. */
export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface GlobalOptions {
  url: string;
  key?: string;
  json?: boolean;
}

export interface Session {
  readonly io: CliIo;
  /** `--json`: print the API's documents as they are */
  readonly json: boolean;
  readonly baseUrl: string;
  client(): FlowlineClient;
  /** writes `value` as JSON when `--json`, else `human()`'s text */
  print(value: unknown, human: () => string): void;
  /**
   * Prints a listing page: as JSON when `--json`, else a table of `headers` with a row per item
   * from `row`, and on stderr how to ask for the next page when there is one.
   */
  printPage<T>(page: { items: T[]; nextCursor: string | null }, headers: string[], row: (item: T) => Cell[]): void;
  close(): void;
}

/** A session over `program`'s parsed global options. */
export function createSession(program: Command, io: CliIo): Session {
  let client: FlowlineClient | null = null;
  const opts = () => program.opts<GlobalOptions>();
  return {
    io,
    get json() {
      return opts().json === true;
    },
    get baseUrl() {
      return opts().url;
    },
    client() {
      if (client) return client;
      const baseUrl = opts().url;
      const apiKey = opts().key ?? io.env?.FLOWLINE_API_KEY;
      client = createClient({
        baseUrl,
        ...(apiKey ? { apiKey } : {}),
        // A request without any HTTP answer becomes one typed error (the client's
        // ApiRequestError covers every answer that did arrive).
        fetch: (input, init) =>
          fetch(input, init).catch((err: unknown) => {
            throw new ConnectionError(baseUrl, err);
          }),
      });
      return client;
    },
    print(value, human) {
      io.stdout(this.json ? pretty(value) : human());
    },
    printPage(page, headers, row) {
      this.print(page, () => table(headers, page.items.map(row)));
      if (!this.json && page.nextCursor) io.stderr(`more: --cursor ${page.nextCursor}\n`);
    },
    close() {
      client?.close();
      client = null;
    },
  };
}

/** A command body: returns its exit code. */
export type Action<A extends unknown[]> = (...args: A) => Promise<ExitCode>;

/** Turns a command body into a commander action that records the body's exit code. */
export type Wrap = <A extends unknown[]>(body: Action<A>) => (...args: A) => Promise<void>;
