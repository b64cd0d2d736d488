/** The whole console: the session gate, then one query cache and one router per session. */
import { useMemo, useState } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { isFinalRefusal } from '../api/refusal';
import { prefetchRunDetail } from '../api/queries';
import { SessionGate, useSession, type ConsoleConfig } from '../session/session';
import { SignIn } from '../session/SignIn';
import { Loading } from '../ui/primitives';
import { createConsoleRouter } from './router';

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

function SignedIn({ history }: { history?: RouterHistory }) {
  const session = useSession();
  const [router] = useState(() => createConsoleRouter(history));
  // a new key is a new world: fresh cache, fresh router
  const queryClient = useMemo(() => {
    const qc = createQueryClient();
    // a linked run view: its run is read while the shell renders, not after the page mounts
    const at = router.latestLocation;
    const runId = (at.search as { runId?: unknown }).runId;
    if (at.pathname.replace(/\/+$/, '').endsWith('/run') && typeof runId === 'string' && runId !== '') prefetchRunDetail(qc, session.client, runId);
    return qc;
  }, [session, router]);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}

export function App({ config, history }: { config: ConsoleConfig; history?: RouterHistory }) {
  return (
    <SessionGate config={config} signedOut={(p) => <SignIn {...p} />} checking={<Loading label="Connecting" />}>
      <SignedIn {...(history ? { history } : {})} />
    </SessionGate>
  );
}
