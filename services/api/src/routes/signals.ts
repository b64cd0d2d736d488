/**
 * `POST /v1/runs/{id}/signals`: a signal to a run, kept (libs/db `run_signals`) until a Wait
 * node on its channel consumes it — the planner consumes the oldest unconsumed one, whether it
 * arrived before or after the Wait was reached. The channel must be one the run's pinned graph
 * declares (404 `SignalUnknown`), the payload must satisfy the channel's schema (422
 * `SignalPayloadInvalid`), the run must not have ended (409 `RunStateConflict`), and a channel
 * keeps at most MAX_PENDING_SIGNALS_PER_CHANNEL unconsumed signals (409 `SignalBacklogFull`).
 * `requestId` makes the send idempotent: the same id again answers the first signal.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { getRunSignalChannels, sendSignal } from '@flowline/db';
import { validateJson, type Json } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { ApiError, NotFoundError, ValidationFailedError } from '../errors';
import { bodyMember, jsonText, sendJson } from '../body';
import { requireUuid } from '../present';
import { publishWake } from '../wake';
import { ErrorSchema, IdParam, SignalAcceptedSchema, SignalBody, jsonBody, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';
import { RunStateConflictError } from './operator';

/** MAX_PENDING_SIGNALS_PER_CHANNEL when the deployment passes none. */
const DEFAULT_MAX_PENDING_SIGNALS = 100;
/** MAX_SIGNAL_PAYLOAD_BYTES when the deployment passes none. */
const DEFAULT_MAX_SIGNAL_PAYLOAD_BYTES = 65_536;

/** 404: the run's graph declares no such channel. */
export class SignalUnknownError extends ApiError {
  constructor(channel: string, declared: string[]) {
    super(404, 'SignalUnknown', `the run's graph declares no signal channel '${channel}'`, [{ channel, declared }]);
  }
}

/** 422: the payload breaks the channel's schema. */
export class SignalPayloadInvalidError extends ApiError {
  constructor(channel: string, errors: string[]) {
    super(422, 'SignalPayloadInvalid', `the payload does not match the schema of channel '${channel}'`, errors.map((message) => ({ key: 'payload', message })));
  }
}

/** 409: the channel already keeps MAX_PENDING_SIGNALS_PER_CHANNEL unconsumed signals. */
export class SignalBacklogFullError extends ApiError {
  constructor(channel: string, limit: number) {
    super(409, 'SignalBacklogFull', `channel '${channel}' of this run already keeps ${limit} unconsumed signals (MAX_PENDING_SIGNALS_PER_CHANNEL)`, [{ channel, limit }]);
  }
}

const signalRoute = v1Route.runs('post', '/v1/runs/{id}/signals', {
  operationId: 'signalRun',
  summary: 'Send a signal to a run (consumed by a Wait node on its channel)',
  description:
    "Kept until a Wait node with config.signal = channel consumes it (the oldest first), also when sent before the Wait is reached. 404 SignalUnknown: the run's graph declares no such channel; " +
    "422 SignalPayloadInvalid: the payload breaks the channel's schema; 409 RunStateConflict: the run has ended; 409 SignalBacklogFull: MAX_PENDING_SIGNALS_PER_CHANNEL reached. " +
    'The same requestId again answers 202 with the first signal (duplicate: true).',
  request: { params: IdParam, body: jsonBody(SignalBody) },
  responses: {
    202: jsonContent(SignalAcceptedSchema, 'signal kept (or the same requestId replayed)'),
    409: jsonContent(ErrorSchema, 'RunStateConflict (run ended) or SignalBacklogFull'),
    422: jsonContent(ErrorSchema, "SignalPayloadInvalid: the payload breaks the channel's schema"),
  },
});

/** Registers the signal route on `app`. */
export function registerSignalRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const maxPending = deps.limits.maxPendingSignalsPerChannel ?? DEFAULT_MAX_PENDING_SIGNALS;
  const maxBytes = deps.limits.maxSignalPayloadBytes ?? DEFAULT_MAX_SIGNAL_PAYLOAD_BYTES;

  app.openapi(signalRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const tenant = c.get('tenant');
    const { channel, requestId } = c.req.valid('json');
    const raw = bodyMember(c, 'payload');
    const payload = (raw === undefined ? null : raw) as Json;
    const payloadJson = jsonText(payload);
    const bytes = Buffer.byteLength(payloadJson, 'utf8');
    if (bytes > maxBytes) {
      throw new ValidationFailedError('signal payload too large', [{ key: 'payload', message: `${bytes} UTF-8 bytes; at most ${maxBytes} (MAX_SIGNAL_PAYLOAD_BYTES)` }]);
    }
    const run = await getRunSignalChannels(deps.pool, tenant, runId);
    if (!run) throw new NotFoundError('run');
    const spec = Object.hasOwn(run.channels, channel) ? run.channels[channel] : undefined;
    if (!spec) throw new SignalUnknownError(channel, Object.keys(run.channels));
    if (spec.schema) {
      const v = validateJson(spec.schema, payload);
      if (!v.valid) throw new SignalPayloadInvalidError(channel, v.errors);
    }
    const out = await sendSignal(deps.pool, { tenantId: tenant, runId, channel, payloadJson, requestId, maxPending });
    if (out.kind === 'runNotFound') throw new NotFoundError('run');
    if (out.kind === 'runTerminal') throw new RunStateConflictError('RunStateConflict', `run is ${out.status}: it takes no more signals`);
    if (out.kind === 'backlogFull') throw new SignalBacklogFullError(channel, maxPending);
    if (!out.duplicate) {
      deps.logger.info({ runId, channel, signalId: out.signalId }, 'signal kept');
      await publishWake(deps, runId, tenant);
    }
    return sendJson(202, { accepted: true, signalId: out.signalId, duplicate: out.duplicate });
  });
}
