/**
 * Rendering a component as the console would: a session whose `@flowline/client` talks to
 * a {@link fakeApi}, a fresh query cache, and (for pages) the console's router on a
 * memory history.
 */
import type { ReactNode } from 'react';
import { afterEach } from 'vitest';
import { cleanup, render } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { createMemoryHistory } from '@tanstack/react-router';
import { createClient, type ApiKeyScope } from '@flowline/client';
import { App, createQueryClient } from '../app/App';
import { SessionProvider } from '../session/session';
import { fakeApi, memoryStorage, type FakeApi } from './fake-api';

afterEach(cleanup);

export const ALL_SCOPES: ApiKeyScope[] = ['read', 'run', 'operate', 'define'];

/** Renders `ui` inside a signed-in session holding `scopes`. */
export function renderInSession(ui: ReactNode, api: FakeApi = fakeApi(), scopes: ApiKeyScope[] = ALL_SCOPES) {
  const client = createClient({ baseUrl: 'http://api.test', fetch: api.fetch, apiKey: 'k-test', transports: ['polling'] });
  const queryClient = createQueryClient();
  const session = { client, me: { tenant: 'acme', principal: 'key:0123456789abcdef', scopes, keyId: null, constraints: null, expiresAt: null, authRequired: true, via: 'key' as const, name: null, groups: [], sessionExpiresAt: null }, apiKey: 'k-test', signOut: () => undefined };
  const view = render(
    <QueryClientProvider client={queryClient}>
      <SessionProvider session={session}>{ui}</SessionProvider>
    </QueryClientProvider>,
  );
  return { ...view, api, client, queryClient };
}

/** Renders the whole console at `url` (e.g. `/console/runs?status=Failed`) against `api`. */
export function renderApp(url: string, api: FakeApi) {
  const history = createMemoryHistory({ initialEntries: [url] });
  const view = render(<App config={{ baseUrl: 'http://api.test', storage: memoryStorage(), fetch: api.fetch, transports: ['polling'] }} history={history} />);
  return { ...view, history };
}
