/**
 * Who the console acts as: an API key pasted by the operator (kept in sessionStorage, so it
 * dies with the tab), sent as the bearer and as the live channel's `auth.token`, or a person
 * signed in through single sign-on (an HttpOnly session cookie the browser sends by itself),
 * and the tenant and scopes `GET /v1/whoami` answered for it. A server without API_KEYS
 * answers whoami without a key, and the console opens without asking for one; a server that
 * checks keys says so in the console's page, and with no key stored and no sign-in session
 * (the page says that too) the sign-in form shows without a whoami that could only be refused.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { createClient, isApiRequestError, type ApiKeyScope, type FlowlineClient, type Whoami } from '@flowline/client';
import { refusalText } from '../api/refusal';
import { API_KEY_STORAGE } from './storage-key';

/** Where the console runs: the API origin, the fetch to use and the key's storage. */
export interface ConsoleConfig {
  baseUrl: string;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  fetch?: typeof fetch;
  /** the API checks keys (its page says so): with no stored key the sign-in form shows without asking whoami */
  authRequired?: boolean;
  /** socket transports (tests may use polling) */
  transports?: Array<'websocket' | 'polling'>;
}

/** A signed-in session. */
export interface Session {
  client: FlowlineClient;
  me: Whoami;
  /** the key in use (null without auth) */
  apiKey: string | null;
  signOut(): void;
}

export { API_KEY_STORAGE };

const SessionContext = createContext<Session | null>(null);

/** The session; only inside {@link SessionGate}'s signed-in tree. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in session');
  return s;
}

/** The client of the session. */
export function useClient(): FlowlineClient {
  return useSession().client;
}

/** True when the session's key holds `scope`. */
export function useCan(scope: ApiKeyScope): boolean {
  return useSession().me.scopes.includes(scope);
}

/** Provides a fixed session (component tests). */
export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

type State =
  | { kind: 'checking' }
  | { kind: 'signedOut'; refusal: string | null }
  | { kind: 'signedIn'; client: FlowlineClient; me: Whoami; apiKey: string | null };

function clientFor(config: ConsoleConfig, apiKey: string | null): FlowlineClient {
  return createClient({
    baseUrl: config.baseUrl,
    // an approval decision made here records the console as its path
    clientName: 'console',
    ...(apiKey ? { apiKey } : {}),
    ...(config.fetch ? { fetch: config.fetch } : {}),
    ...(config.transports ? { transports: config.transports } : {}),
  });
}

/** Asks whoami with `apiKey` (after `warm` has started its reads on the new client); the state it leads to. */
async function signIn(config: ConsoleConfig, apiKey: string | null, warm?: (client: FlowlineClient) => void): Promise<State> {
  const client = clientFor(config, apiKey);
  warm?.(client);
  try {
    const me = await client.whoami();
    return { kind: 'signedIn', client, me, apiKey };
  } catch (err) {
    client.close();
    // no key and the server wants one: just ask for it
    if (apiKey === null && isApiRequestError(err, 'Unauthorized')) return { kind: 'signedOut', refusal: null };
    return { kind: 'signedOut', refusal: refusalText(err) };
  }
}

/** Renders `signedOut` until a key (or no key, single-tenant) is accepted, then `children` in a session. */
export function SessionGate(props: {
  config: ConsoleConfig;
  children: ReactNode;
  signedOut: (p: { submit(apiKey: string): Promise<void>; refusal: string | null; busy: boolean }) => ReactNode;
  checking?: ReactNode;
  /**
   * Called with each new client as whoami is asked, so the first view's reads go out beside
   * it instead of after it (a refused key's reads are dropped with its client).
   */
  warm?: (client: FlowlineClient) => void;
}) {
  const { config, warm } = props;
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    const stored = config.storage.getItem(API_KEY_STORAGE);
    // no key yet and the API wants one: asking whoami would only be refused (a 401 in every console)
    const first = stored === null && config.authRequired ? Promise.resolve<State>({ kind: 'signedOut', refusal: null }) : signIn(config, stored, warm);
    void first.then((next) => {
      if (!live) {
        if (next.kind === 'signedIn') next.client.close();
        return;
      }
      if (next.kind === 'signedOut' && stored !== null) config.storage.removeItem(API_KEY_STORAGE);
      setState(next);
    });
    return () => {
      live = false;
    };
  }, [config, warm]);

  const submit = useCallback(
    async (apiKey: string) => {
      setBusy(true);
      const next = await signIn(config, apiKey.trim(), warm);
      setBusy(false);
      if (next.kind === 'signedIn') config.storage.setItem(API_KEY_STORAGE, apiKey.trim());
      setState(next);
    },
    [config, warm],
  );

  const signedIn = state.kind === 'signedIn' ? state : null;
  const session = useMemo<Session | null>(
    () =>
      signedIn && {
        client: signedIn.client,
        me: signedIn.me,
        apiKey: signedIn.apiKey,
        signOut: () => {
          config.storage.removeItem(API_KEY_STORAGE);
          const client = signedIn.client;
          // a single sign-on session lives in an HttpOnly cookie: only the server can end it
          const ended = signedIn.me.via === 'session' ? client.signOut().catch(() => undefined) : Promise.resolve();
          void ended.then(() => {
            client.close();
            setState({ kind: 'signedOut', refusal: null });
          });
        },
      },
    [signedIn, config],
  );

  if (state.kind === 'checking') return <>{props.checking ?? null}</>;
  if (session) return <SessionContext.Provider value={session}>{props.children}</SessionContext.Provider>;
  return <>{props.signedOut({ submit, refusal: state.kind === 'signedOut' ? state.refusal : null, busy })}</>;
}
