/**
 * `@flowline/client`: the one TypeScript client of the Flowline contract — REST routes
 * and the live channel. `createClient({ baseUrl, apiKey })`; the socket connects on the
 * first `subscribeRun` / `live()` use.
 */
import { createLiveClient, type LiveClient, type RunChange, type RunSubscription } from './live';
import { createRestClient, type RestClientOptions } from './rest';

export { ApiRequestError, createRestClient } from './rest';
export type { RestClient, RestClientOptions, Page, EventPage, Definition, RunSummary, RunDetail } from './rest';
export { LiveRequestError, createLiveClient } from './live';
export type { LiveClient, LiveClientOptions, RunChange, RunSubscription } from './live';

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
    /** subscribes to a run's changes from `afterSeq`; see {@link RunChange} */
    subscribeRun: (runId: string, afterSeq: number, onChange: (c: RunChange) => void): RunSubscription =>
      liveClient().subscribeRun(runId, afterSeq, onChange),
    /** closes the live connection, if any */
    close() {
      live?.close();
      live = null;
    },
  };
}

/** The client's type. */
export type FlowlineClient = ReturnType<typeof createClient>;
