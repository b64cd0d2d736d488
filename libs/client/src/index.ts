/**
 * `@flowline/client`: the one TypeScript client of the Flowline contract — every REST
 * route of CONTRACT §5 and the live channel of §6. `createClient({ baseUrl, apiKey })`;
 * the socket connects on the first live use (`subscribeRun`, `streamNodeActivity`,
 * `unsubscribeRun`, `live()`).
 */
import type { NodeActivity } from '@flowline/queue/protocol';
import { createLiveClient, type LATEST_SEQ, type LiveClient, type RunChange, type RunSubscription } from './live';
import { createRestClient, type RestClientOptions } from './rest';

export { ApiRequestError, createRestClient, isApiRequestError } from './rest';
export type { RestClient, RestClientOptions, Page, EventPage, RunStateAt, RawResponse, SendOptions, StreamOptions } from './rest';
export type * from './types';
export { LATEST_SEQ, LiveRequestError, createLiveClient } from './live';
export type { LiveClient, LiveClientOptions, LiveConnectionState, RunChange, RunSubscription } from './live';
export type { LiveEvent, NodeActivity, RunChangedPing, RunSnapshot } from '@flowline/queue/protocol';
export { LIVE_EVENTS } from '@flowline/queue/live-wire';

/** Options of {@link createClient}. */
export interface ClientOptions extends RestClientOptions {
  transports?: Array<'websocket' | 'polling'>;
  /** background re-read failures of subscriptions */
  onError?: (err: unknown) => void;
}

/** REST methods plus the live channel. */
export function createClient(o: ClientOptions) {
  const rest = createRestClient(o);
  let live: LiveClient | null = null;
  const liveClient = (): LiveClient =>
    (live ??= createLiveClient({
      baseUrl: o.baseUrl,
      rest,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.transports ? { transports: o.transports } : {}),
      ...(o.onError ? { onError: o.onError } : {}),
    }));
  return {
    ...rest,
    /** the live connection (created on first use) */
    live: liveClient,
    /** subscribes to a run's changes from `afterSeq` (or from its latest seq: `'latest'`); see {@link RunChange} */
    subscribeRun: (runId: string, afterSeq: number | typeof LATEST_SEQ, onChange: (c: RunChange) => void): RunSubscription =>
      liveClient().subscribeRun(runId, afterSeq, onChange),
    /** `unsubscribeRun`: leaves the run's room (and its activity feeds); local subscriptions of the run stop */
    unsubscribeRun: (runId: string): Promise<void> => liveClient().unsubscribeRun(runId),
    /** `streamNodeActivity` → `nodeActivity` deltas of a Running node's invocation */
    streamNodeActivity: (runId: string, nodeKey: string, onActivity: (a: NodeActivity) => void) =>
      liveClient().streamNodeActivity(runId, nodeKey, onActivity),
    /** closes the live connection, if any */
    close() {
      live?.close();
      live = null;
    },
  };
}

/** The client's type. */
export type FlowlineClient = ReturnType<typeof createClient>;
