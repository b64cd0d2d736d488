/** `flowline runs start | list | get | events | cancel | reschedule | fork | bulk | bulk-status | bulk-resume | bulk-runs | watch`. */
import { InvalidArgumentError, type Command } from 'commander';
import type { BulkActionBody, BulkJobRun, RunDetail, RunSearchFilter } from '@flowline/client';
import { jsonArgument, nonNegativeInt, positiveInt, runPriority } from '../args';
import { compact, eventLine, fields, table } from '../format';
import { followRun } from '../follow';
import { EXIT, type ExitCode } from '../io';
import type { Session, Wrap } from '../session';

/** `run <id> <status>[ <failureClass>][: reason]` and the output, the end of a followed run. */
function outcome(d: RunDetail): string {
  const r = d.run;
  const failure = r.failureClass && r.failureClass !== 'None' ? ` ${r.failureClass}` : '';
  return `run ${r.id} ${r.status}${failure}${r.reason ? `: ${r.reason}` : ''}\n` + (d.output !== null ? `output ${compact(d.output)}\n` : '');
}

/** Exit 0 for a Completed run, 1 for any other status. */
const exitFor = (d: RunDetail): ExitCode => (d.run.status === 'Completed' ? EXIT.ok : EXIT.refused);

/**
 * Follows `runId` over the live channel until terminal. Human mode prints each event as it
 * arrives and then the outcome; `--json` prints NDJSON events (`eventsAsJson`) or only the
 * final run document.
 */
/** How long `runs start --wait` lets the start itself wait before following over the live channel, s. */
const START_WAIT_S = 30;

async function follow(s: Session, runId: string, timeoutSeconds: number, eventsAsJson: boolean): Promise<ExitCode> {
  const client = s.client();
  await followRun(
    client,
    runId,
    (events) => {
      for (const e of events) {
        if (!s.json) s.io.stdout(`${eventLine(e)}\n`);
        else if (eventsAsJson) s.io.stdout(`${JSON.stringify(e)}\n`);
      }
    },
    { timeoutSeconds },
  );
  const detail = await client.runs.get(runId);
  if (!s.json) s.io.stdout(outcome(detail));
  else if (!eventsAsJson) s.print(detail, () => '');
  return exitFor(detail);
}

function runView(d: RunDetail): string {
  const r = d.run;
  return (
    fields([
      ['run', r.id],
      ['definition', r.definitionId],
      ['status', r.status],
      ['failureClass', r.failureClass],
      ['reason', r.reason],
      ['paused', r.paused],
      ['priority', r.priority ?? 3],
      ['created', r.createdAt],
      ['finished', r.finishedAt],
    ]) +
    '\n' +
    table(
      ['key', 'kind', 'status', 'attempt', 'failureClass'],
      d.nodeRuns.map((n) => [n.nodeKey, n.kind, n.status, n.attempt, n.failureClass]),
    ) +
    (d.output !== null ? `\noutput ${compact(d.output)}\n` : '')
  );
}

const TIMEOUT_HELP = 'give up after this many seconds (0: no limit)';

/** `--metadata k=v`, repeatable: collected into an object (split at the first `=`). */
function metadataPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`'${value}' is not key=value`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** `--node-map old=new`, repeatable: the migrate's node map. */
function nodeMapPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0 || at === value.length - 1) throw new InvalidArgumentError(`'${value}' is not old=new`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** `--canary-percent`: a share in (0, 100); the API refuses anything else too. */
function percentOption(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 100)) throw new InvalidArgumentError('expected a percent more than 0 and under 100');
  return n;
}

/** `--max-error-rate`: a rate in [0, 1). */
function rateOption(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n < 1)) throw new InvalidArgumentError('expected a rate from 0 up to (not including) 1');
  return n;
}

interface BulkMigrateFlags {
  toVersion?: number;
  nodeMap?: Record<string, string>;
  canaryPercent?: number;
  maxErrorRate?: number;
}

/** The search options shared by `runs list` and `runs bulk`. */
function searchOptions(c: Command): Command {
  return c
    .option('--q <text>', 'a run id, the start of one (4+ characters), or text in the definition, reason, failure class or a metadata key:value')
    .option('--status <statuses>', 'only runs in one of these statuses, comma-separated (e.g. Failed,Cancelled)')
    .option('--definition <id>', 'only runs of this definition')
    .option('--definition-version <n>', 'only runs pinned to this definition version', positiveInt)
    .option('--failure-class <class>', 'only runs failed with this class (e.g. Timeout)')
    .option('--metadata <key=value>', 'only runs with this metadata pair (repeatable: every pair)', metadataPair)
    .option('--created-after <time>', 'created at or after (RFC 3339)')
    .option('--created-before <time>', 'created strictly before (RFC 3339)')
    .option('--finished-after <time>', 'finished at or after (RFC 3339)')
    .option('--finished-before <time>', 'finished strictly before (RFC 3339)')
    .option('--conversation <id>', 'only runs bound to this conversation');
}

interface SearchFlags {
  q?: string;
  status?: string;
  definition?: string;
  definitionVersion?: number;
  failureClass?: string;
  metadata?: Record<string, string>;
  createdAfter?: string;
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  conversation?: string;
}

/** The search flags as a filter (the server checks the values and names a bad one). */
function filterOf(o: SearchFlags): RunSearchFilter {
  const f: Record<string, unknown> = {};
  if (o.q !== undefined) f.q = o.q;
  if (o.status) f.status = o.status.split(',').map((x) => x.trim()).filter(Boolean);
  if (o.definition) f.definitionId = o.definition;
  if (o.definitionVersion !== undefined) f.definitionVersion = o.definitionVersion;
  if (o.failureClass) f.failureClass = o.failureClass;
  if (o.metadata) f.metadata = o.metadata;
  for (const k of ['createdAfter', 'createdBefore', 'finishedAfter', 'finishedBefore'] as const) if (o[k]) f[k] = o[k];
  if (o.conversation) f.conversationId = o.conversation;
  return f as RunSearchFilter;
}

export function registerRuns(program: Command, s: Session, wrap: Wrap): void {
  const runs = program.command('runs').description('executions of definitions');

  runs
    .command('start')
    .description('start a run; prints its id (with --wait, waits for its end and exits 0 only when it completes)')
    .argument('<definitionId>', 'definition id')
    .option('--input <json>', 'run input: inline JSON or @file')
    .option('--request-id <id>', 'idempotency key: the same key starts the same run')
    .option('--metadata <key=value>', 'run metadata pair, searchable (repeatable)', metadataPair)
    .option('--priority <1-5>', "the run's priority, 5 most urgent (default 3): orders its tenant's held work and Pending runs", runPriority)
    .option('--start-at <time>', 'a delayed start: the run reads Scheduled until this RFC 3339 instant')
    .option('--delay <duration>', 'a delayed start after this ISO-8601 duration from now (PT10M, P1D)')
    .option('--wait', 'wait for the run to end: the start itself waits (?wait=, up to 30 s or --timeout), then the live channel follows a longer run')
    .option('--timeout <seconds>', TIMEOUT_HELP, nonNegativeInt, 0)
    .action(
      wrap(async (definitionId: string, o: { input?: string; requestId?: string; metadata?: Record<string, string>; priority?: number; startAt?: string; delay?: string; wait?: boolean; timeout: number }) => {
        const input = o.input !== undefined ? await jsonArgument(o.input, s.io.cwd, '--input') : undefined;
        const body = {
          ...(input !== undefined ? { input } : {}),
          ...(o.requestId ? { requestId: o.requestId } : {}),
          ...(o.metadata ? { metadata: o.metadata } : {}),
          ...(o.priority !== undefined ? { priority: o.priority } : {}),
          ...(o.startAt !== undefined ? { startAt: o.startAt } : {}),
          ...(o.delay !== undefined ? { delay: o.delay } : {}),
        };
        if (!o.wait) {
          const { runId } = await s.client().runs.start(definitionId, body);
          s.print({ runId }, () => `${runId}\n`);
          return EXIT.ok;
        }
        // most runs end within the start's own wait: one request, no live channel
        const waitSeconds = o.timeout > 0 ? Math.min(o.timeout, START_WAIT_S) : START_WAIT_S;
        const began = Date.now();
        const started = await s.client().runs.startAndWait(definitionId, body, waitSeconds);
        if (!s.json) s.io.stdout(`${started.runId}\n`);
        if (started.run) {
          // the same lines a follow prints: every event of the run, then the outcome
          if (!s.json) for (const e of await s.client().runs.allEvents(started.runId)) s.io.stdout(`${eventLine(e)}\n`);
          const detail = await s.client().runs.get(started.runId);
          if (!s.json) s.io.stdout(outcome(detail));
          else s.print(detail, () => '');
          return exitFor(detail);
        }
        const left = o.timeout > 0 ? Math.max(1, o.timeout - Math.floor((Date.now() - began) / 1000)) : 0;
        return follow(s, started.runId, left, false);
      }),
    );

  searchOptions(runs.command('list').description('list and search runs, newest first'))
    .option('--limit <n>', 'page size (the API clamps it to 200)', positiveInt)
    .option('--cursor <cursor>', 'the next page, from a previous listing')
    .action(
      wrap(async (o: SearchFlags & { limit?: number; cursor?: string }) => {
        const f = filterOf(o);
        const page = await s.client().runs.list({
          ...f,
          ...(o.limit ? { limit: o.limit } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
        });
        s.printPage(page, ['id', 'status', 'failureClass', 'definition', 'created', 'finished'], (r) => [r.id, r.status, r.failureClass, r.definitionId, r.createdAt, r.finishedAt]);
        return EXIT.ok;
      }),
    );

  searchOptions(
    runs
      .command('bulk')
      .description('apply cancel | retry-failed | resume | fork | migrate to every run the filter matches, as a background job; prints its id and count (--dry-run: the count only)')
      .argument('<action>', 'cancel, retry-failed, resume, fork or migrate'),
  )
    .option('--dry-run', 'print how many runs the action would apply to, change nothing')
    .option('--from-node <key>', 'fork: the node to fork each run from')
    .option('--failed-only', 'fork: keep what succeeded downstream of the node too')
    .option('--to-version <n>', "migrate: the version to move the runs to (the latest version of --definition)", positiveInt)
    .option('--node-map <old=new>', 'migrate: an old node key mapped to a new one (repeatable)', nodeMapPair)
    .option('--canary-percent <p>', 'migrate: migrate this share (more than 0, under 100) first, then pause until bulk-resume', percentOption)
    .option('--max-error-rate <r>', 'migrate: pause when the share of refused migrations since the last resume exceeds this (0 ≤ r < 1)', rateOption)
    .option('--request-id <id>', 'idempotency key: the same key submits the same job once')
    .action(
      wrap(async (action: string, o: SearchFlags & BulkMigrateFlags & { dryRun?: boolean; fromNode?: string; failedOnly?: boolean; requestId?: string }) => {
        const body: BulkActionBody = {
          action: action as BulkActionBody['action'],
          filter: filterOf(o),
          ...(o.dryRun ? { dryRun: true } : {}),
          ...(o.fromNode ? { fromNodeKey: o.fromNode } : {}),
          ...(o.failedOnly ? { failedOnly: true } : {}),
          ...(o.toVersion !== undefined ? { toVersion: o.toVersion } : {}),
          ...(o.nodeMap ? { nodeMap: o.nodeMap } : {}),
          ...(o.canaryPercent !== undefined ? { canaryPercent: o.canaryPercent } : {}),
          ...(o.maxErrorRate !== undefined ? { maxErrorRate: o.maxErrorRate } : {}),
          ...(o.requestId ? { requestId: o.requestId } : {}),
        };
        const answer = (await s.client().runs.bulk(body)) as { count: number; bulkId?: string };
        s.print(answer, () => (answer.bulkId ? `${answer.bulkId} ${answer.count} runs\n` : `${answer.count} runs\n`));
        return EXIT.ok;
      }),
    );

  runs
    .command('bulk-status')
    .description("a bulk action job's status and counts")
    .argument('<bulkId>', 'bulk job id')
    .action(
      wrap(async (bulkId: string) => {
        const job = await s.client().runs.bulkProgress(bulkId);
        s.print(job, () =>
          fields([
            ['bulk', job.bulkId],
            ['action', job.action],
            ['status', job.status],
            ['paused because', job.pauseReason],
            ['total', job.total],
            ['done', job.done],
            ['failed', job.failed],
            ['updated', job.updatedAt],
          ]),
        );
        return EXIT.ok;
      }),
    );

  runs
    .command('bulk-resume')
    .description('resume a Paused bulk migrate (after its canary, or a pause on the error rate); prints its status')
    .argument('<bulkId>', 'bulk job id')
    .action(
      wrap(async (bulkId: string) => {
        const job = await s.client().runs.bulkResume(bulkId);
        s.print(job, () => `${job.bulkId} ${job.status} ${job.done + job.failed}/${job.total}\n`);
        return EXIT.ok;
      }),
    );

  runs
    .command('bulk-runs')
    .description("a bulk job's processed runs with their outcome and a refusal's reason")
    .argument('<bulkId>', 'bulk job id')
    .option('--outcome <outcome>', 'only applied, noop or refused runs')
    .option('--limit <n>', 'page size', positiveInt)
    .option('--cursor <cursor>', 'the next page')
    .action(
      wrap(async (bulkId: string, o: { outcome?: BulkJobRun['outcome']; limit?: number; cursor?: string }) => {
        const page = await s.client().runs.bulkRuns(bulkId, { ...(o.outcome ? { outcome: o.outcome } : {}), ...(o.limit ? { limit: o.limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) });
        s.printPage(page, ['run', 'outcome', 'reason', 'details'], (r) => [r.runId, r.outcome, r.reason, (r.details ?? []).map((d) => d.message).join('; ') || null]);
        return EXIT.ok;
      }),
    );

  runs
    .command('get')
    .description('a run and a table of its nodes')
    .argument('<runId>', 'run id')
    .action(
      wrap(async (runId: string) => {
        const d = await s.client().runs.get(runId);
        s.print(d, () => runView(d));
        return EXIT.ok;
      }),
    );

  runs
    .command('events')
    .description("a run's events, oldest first")
    .argument('<runId>', 'run id')
    .option('--after-seq <seq>', 'only events after this seq', nonNegativeInt)
    .option('--limit <n>', 'at most this many (the API caps it)', positiveInt)
    .action(
      wrap(async (runId: string, o: { afterSeq?: number; limit?: number }) => {
        const page = await s.client().runs.events(runId, {
          ...(o.afterSeq !== undefined ? { afterSeq: o.afterSeq } : {}),
          ...(o.limit ? { limit: o.limit } : {}),
        });
        s.print(page, () => page.events.map((e) => `${eventLine(e)}\n`).join(''));
        const last = page.events.at(-1);
        if (!s.json && page.truncated && last) s.io.stderr(`more: --after-seq ${last.seq}\n`);
        return EXIT.ok;
      }),
    );

  runs
    .command('cancel')
    .description('cancel a run (idempotent; it reads Cancelling until its work drains)')
    .argument('<runId>', 'run id')
    .action(
      wrap(async (runId: string) => {
        const answer = await s.client().runs.cancel(runId);
        s.print(answer, () => `cancel requested: ${runId}\n`);
        return EXIT.ok;
      }),
    );

  runs
    .command('reschedule')
    .description('move a delayed start (a Scheduled run) to another time; prints its new notBefore')
    .argument('<runId>', 'run id')
    .option('--start-at <time>', 'the new RFC 3339 instant (one already past releases the run at once)')
    .option('--delay <duration>', 'the new time as an ISO-8601 duration from now')
    .action(
      wrap(async (runId: string, o: { startAt?: string; delay?: string }) => {
        const answer = await s.client().runs.reschedule(runId, { ...(o.startAt !== undefined ? { startAt: o.startAt } : {}), ...(o.delay !== undefined ? { delay: o.delay } : {}) });
        s.print(answer, () => `${answer.runId} not before ${answer.notBefore}\n`);
        return EXIT.ok;
      }),
    );

  runs
    .command('fork')
    .description('start a new run from a node of a run, reusing what succeeded upstream of it; prints its id (with --wait, follows it)')
    .argument('<runId>', 'the run to fork')
    .argument('<nodeKey>', 'the node to fork from: it and everything not upstream of it run again')
    .option('--input <json>', "the node's edited input (for the Start node, the run input): inline JSON or @file")
    .option('--definition-version <n>', "pin this saved version of the run's definition", positiveInt)
    .option('--failed-only', "also keep the node and its descendants where they succeeded (a fan-out's succeeded branches; a failed Loop resumes at its failed iteration)")
    .option('--request-id <id>', 'idempotency key: the same key forks the same run once')
    .option('--wait', 'follow the new run over the live channel until it is terminal')
    .option('--timeout <seconds>', TIMEOUT_HELP, nonNegativeInt, 0)
    .action(
      wrap(async (runId: string, nodeKey: string, o: { input?: string; definitionVersion?: number; failedOnly?: boolean; requestId?: string; wait?: boolean; timeout: number }) => {
        const input = o.input !== undefined ? await jsonArgument(o.input, s.io.cwd, '--input') : undefined;
        const forked = await s.client().runs.fork(runId, {
          fromNodeKey: nodeKey,
          ...(input !== undefined ? { input } : {}),
          ...(o.definitionVersion !== undefined ? { definitionVersion: o.definitionVersion } : {}),
          ...(o.failedOnly ? { failedOnly: true } : {}),
          ...(o.requestId ? { requestId: o.requestId } : {}),
        });
        if (!o.wait) {
          s.print(forked, () => `${forked.runId}\n`);
          return EXIT.ok;
        }
        if (!s.json) s.io.stdout(`${forked.runId}\n`);
        return follow(s, forked.runId, o.timeout, false);
      }),
    );

  runs
    .command('watch')
    .description('print each event of a run as it arrives until the run is terminal (exit 0 only when it completes)')
    .argument('<runId>', 'run id')
    .option('--timeout <seconds>', TIMEOUT_HELP, nonNegativeInt, 0)
    .action(
      wrap(async (runId: string, o: { timeout: number }) => {
        // A REST read first: an unknown run is refused with the API's own NotFound.
        await s.client().runs.get(runId);
        return follow(s, runId, o.timeout, true);
      }),
    );
}
