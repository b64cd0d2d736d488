/**
 * Event triggers' fan-out: each event `POST /v1/events` keeps is judged by every definition of
 * the tenant whose graph's `triggers` listen for its name (libs/graph `judgeEvent`), and each
 * match starts one ordinary run — same checks, fair share and backlog bound as a REST start —
 * whose request id `event:<eventId>:<definitionId>` makes it exactly once however often the
 * event is fanned out (the intake at once, the sweep after a crash or a full backlog, a replay).
 * Every verdict is recorded for `GET /v1/events/{id}`.
 */
import {
  eventsDueForFanout,
  eventSubscribers,
  getDefinitionPlanGraph,
  inboundEventsByIds,
  recordEventFanout,
  sendInboundEvents,
  type EventMatch,
  type InboundEventInput,
  type StoredEvent,
} from '@flowline/db';
import { judgeEvent, type Graph, type Json } from '@flowline/graph';
import type { AppDeps } from './context';
import { ApiError } from './errors';
import { startTriggeredRun } from './run-start';
import { publishWake } from './wake';

/** Fan-outs of one request run a few events at a time: each starts its subscribers' runs one by one. */
const FANOUT_CONCURRENCY = 4;

/** What the intake did with a list of events. */
export interface IntakeResult {
  /** every event's id, in order (generated when not given) */
  ids: string[];
  /** the ids kept anew (the others were sent before) */
  kept: string[];
  /** runs whose parked Waits the events woke */
  wokenRunIds: string[];
  /** the verdicts of the new events' fan-outs, by event id */
  fanouts: Map<string, FanoutResult>;
}

/**
 * The event intake (`POST /v1/events`, a webhook whose target is an event): keeps the events
 * (deduplicated by id), wakes the Waits waiting on their names and fans the new ones out to the
 * definitions whose triggers listen for them. A fan-out cut short is finished by the sweep.
 */
export async function intakeEvents(deps: AppDeps, tenant: string, events: InboundEventInput[]): Promise<IntakeResult> {
  const out = await sendInboundEvents(deps.pool, tenant, events);
  if (out.wokenRunIds.length > 0) deps.logger.info({ events: out.kept.length, runs: out.wokenRunIds.length }, 'events woke waiting runs');
  await Promise.all(out.wokenRunIds.map((runId) => publishWake(deps, runId, tenant)));
  const due = (await inboundEventsByIds(deps.pool, tenant, out.kept)).filter((e) => e.fanoutDue);
  const fanouts = new Map<string, FanoutResult>();
  for (let i = 0; i < due.length; i += FANOUT_CONCURRENCY) {
    const batch = due.slice(i, i + FANOUT_CONCURRENCY);
    const results = await Promise.all(batch.map((e) => fanOutEvent(deps, e)));
    batch.forEach((e, j) => fanouts.set(e.id, results[j]!));
  }
  return { ids: out.ids, kept: out.kept, wokenRunIds: out.wokenRunIds, fanouts };
}

/** The run request id of (event, definition): what makes a fan-out exactly once. */
export function eventRunRequestId(eventId: string, definitionId: string): string {
  return `event:${eventId}:${definitionId}`;
}

/** What one fan-out of an event did: each subscriber's verdict, and whether none was deferred. */
export interface FanoutResult {
  matches: EventMatch[];
  finished: boolean;
}

/**
 * Judges `event` by its subscribers (or only `definitionIds`, for a replay) and starts the
 * matching runs; records the verdicts. A start refused for now (backlog full, overloaded)
 * leaves the fan-out due for the sweep; one refused for good (the graph no longer starts, the
 * input breaks its schema) is recorded `refused` with the reason.
 */
export async function fanOutEvent(deps: AppDeps, event: StoredEvent, definitionIds?: ReadonlySet<string>): Promise<FanoutResult> {
  const subscribers = (await eventSubscribers(deps.pool, event.tenantId, event.name)).filter((s) => definitionIds === undefined || definitionIds.has(s.id));
  // the subscribers' verdicts, recorded; a replay's definitions that do not listen are only answered
  const recorded: EventMatch[] = [];
  for (const s of subscribers) recorded.push(await judgeOne(deps, event, s.id, s.enabled));
  const finished = recorded.every((m) => m.outcome !== 'deferred');
  const listening = new Set(subscribers.map((s) => s.id));
  const strangers: EventMatch[] = [...(definitionIds ?? [])]
    .filter((id) => !listening.has(id))
    .map((id) => ({ definitionId: id, outcome: 'notMatched', reason: `the definition has no trigger for '${event.name}'`, runId: null }));
  const matches = [...recorded, ...strangers];
  // a replay only adds verdicts: the event's own fan-out state is the intake's and the sweep's
  await recordEventFanout(deps.pool, event.tenantId, event.id, recorded, finished && definitionIds === undefined);
  if (recorded.length > 0) {
    const runs = recorded.filter((m) => m.runId !== null).length;
    deps.logger.info({ eventId: event.id, subscribers: recorded.length, runs, finished }, 'event fanned out');
  }
  return { matches, finished };
}

async function judgeOne(deps: AppDeps, event: StoredEvent, definitionId: string, enabled: boolean): Promise<EventMatch> {
  const none = { definitionId, runId: null };
  if (!enabled) return { ...none, outcome: 'refused', reason: 'the definition is disabled' };
  const def = await getDefinitionPlanGraph(deps.pool, event.tenantId, definitionId);
  if (!def) return { ...none, outcome: 'refused', reason: 'the definition is gone' };
  const triggers = (def.planGraph as Graph).triggers ?? [];
  const v = judgeEvent(triggers, { id: event.id, name: event.name, data: event.data as Json, ts: event.ts });
  if (v.outcome !== 'matched') return { ...none, outcome: v.outcome, reason: v.reason };
  try {
    const res = await startTriggeredRun(deps, event.tenantId, definitionId, v.input, eventRunRequestId(event.id, definitionId));
    switch (res.kind) {
      case 'created':
      case 'replayed':
        return { definitionId, outcome: 'matched', reason: null, runId: res.runId };
      case 'backlogFull':
        return { ...none, outcome: 'deferred', reason: `the tenant's backlog is full (${res.pending} Pending runs); retried` };
      case 'definitionNotFound':
        return { ...none, outcome: 'refused', reason: 'the definition is gone' };
      default:
        return { ...none, outcome: 'refused', reason: `run start answered ${res.kind}` };
    }
  } catch (err) {
    // a keyed refusal (the graph no longer starts, the input breaks the Start's schema) is the
    // event's answer for good; anything else (a database hiccup) is tried again by the sweep
    if (err instanceof ApiError && err.status < 500 && err.status !== 429) return { ...none, outcome: 'refused', reason: `${err.code}: ${err.message}` };
    deps.logger.warn({ err, eventId: event.id, definitionId }, 'event fan-out start failed; the sweep retries');
    return { ...none, outcome: 'deferred', reason: 'the run could not be started yet; retried' };
  }
}

/** Options of the fan-out sweep. */
export interface FanoutSweepOptions {
  /** pause between sweeps, ms */
  everyMs: number;
  /** an event younger than this is left to the intake that received it, ms */
  minAgeMs: number;
  /** most events per sweep */
  batch: number;
}

/**
 * One sweep: finishes the fan-out of due events the intake did not (it crashed, or a start was
 * deferred). Safe on every API replica at once: a repeated fan-out starts no second run.
 */
export async function sweepEventFanout(deps: AppDeps, opts: Pick<FanoutSweepOptions, 'minAgeMs' | 'batch'>): Promise<number> {
  const due = await eventsDueForFanout(deps.pool, opts.minAgeMs, opts.batch);
  for (const event of due) await fanOutEvent(deps, event);
  return due.length;
}

/** Runs {@link sweepEventFanout} every `everyMs` until the returned stop is called. */
export function startEventFanoutSweep(deps: AppDeps, opts: FanoutSweepOptions): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    if (stopped) return;
    running = sweepEventFanout(deps, opts)
      .catch((err: unknown) => deps.logger.warn({ err }, 'event fan-out sweep failed; retried next sweep'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.everyMs);
      });
  };
  timer = setTimeout(tick, opts.everyMs);
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
  };
}
