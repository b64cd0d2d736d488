/** The whole console: the session gate, then one query cache and one router per session. */
import { useCallback, useMemo, useState } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { isFinalRefusal } from '../api/refusal';
import { prefetchRunDetail } from '../api/queries';
import type { FlowlineClient } from '@flowline/client';
import { SessionGate, useSession, type ConsoleConfig } from '../session/session';
import { SignIn } from '../session/SignIn';
import { Loading } from '../ui/primitives';
import { createConsoleRouter } from './router';
import { linkedRunId } from '../boot/early';

/** A query cache: no retry of a 4xx answer (a refusal is shown at once), no refetch storms. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (count, err) => !isFinalRefusal(err) && count < 2,
        staleTime: 1_000,
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });
}

/** One query cache per client: a new key is a new client, so a new world. */
const caches = new WeakMap<FlowlineClient, QueryClient>();
function cacheOf(client: FlowlineClient): QueryClient {
  let qc = caches.get(client);
  if (!qc) caches.set(client, (qc = createQueryClient()));
  return qc;
}

function SignedIn({ history }: { history?: RouterHistory }) {
  const session = useSession();
  // a new key is a new world: fresh cache, fresh router
  const [router] = useState(() => createConsoleRouter(history));
  const queryClient = useMemo(() => cacheOf(session.client), [session]);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}

export function App({ config, history }: { config: ConsoleConfig; history?: RouterHistory }) {
  // a linked run view: its run is read beside whoami, not after the session and the page mount
  const warm = useCallback(
    (client: FlowlineClient) => {
      const runId = linkedRunId(history?.location ?? window.location);
      if (runId) prefetchRunDetail(cacheOf(client), client, runId);
    },
    [history],
  );
  return (
    <SessionGate config={config} warm={warm} signedOut={(p) => <SignIn {...p} baseUrl={config.baseUrl} />} checking={<Loading label="Connecting" />}>
      <SignedIn {...(history ? { history } : {})} />
    </SessionGate>
  );
}
