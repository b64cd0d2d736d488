/**
 * How `npm start` shows its services' log lines: every service writes JSON lines (pino); on a
 * terminal the starter pretty-prints them (pino-pretty: time, level, message, then the fields
 * such as runId, nodeKey, invocationId), anywhere else (a pipe, a file, a log shipper) it
 * passes them through as JSON. A line that is not a JSON object is passed through as is.
 */
import { prettyFactory } from 'pino-pretty';

/** Formats one output line of a service. */
export type LineFormatter = (line: string) => string;

/** JSON lines unchanged (`pretty` false), or pretty-printed with `colorize` (`pretty` true). */
export function logLineFormatter(o: { pretty: boolean; colorize?: boolean }): LineFormatter {
  if (!o.pretty) return (line) => line;
  const prettify = prettyFactory({ colorize: o.colorize ?? false, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true });
  return (line) => {
    if (!line.startsWith('{')) return line;
    return prettify(line).replace(/\r?\n$/, '');
  };
}
