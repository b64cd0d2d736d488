// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { SessionGate, useSession, API_KEY_STORAGE, type ConsoleConfig } from './session';
import { SignIn } from './SignIn';
import { fakeApi, memoryStorage, refuse } from '../test/fake-api';

afterEach(cleanup);

function Who() {
  const { me, apiKey } = useSession();
  return (
    <p>
      signed in as {me.tenant} with [{me.scopes.join(',')}] key {apiKey ?? 'none'}
    </p>
  );
}

function mount(config: ConsoleConfig) {
  return render(
    <SessionGate config={config} signedOut={(p) => <SignIn {...p} />} checking={<p>checking</p>}>
      <Who />
    </SessionGate>,
  );
}

const KEYS: Record<string, { tenant: string; scopes: string[] }> = {
  'k-admin': { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define'] },
  'k-dash': { tenant: 'acme', scopes: ['read'] },
  'k-ops': { tenant: 'acme', scopes: ['operate'] },
};

function keyedApi() {
  return fakeApi({
    'GET /v1/whoami': ({ headers }) => {
      const key = /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1];
      const grant = key ? KEYS[key] : undefined;
      if (!grant) return refuse(401, 'Unauthorized', 'missing or unknown API key');
      if (!grant.scopes.includes('read')) return refuse(403, 'Forbidden', "this key lacks the 'read' scope");
      return { body: { ...grant, authRequired: true } };
    },
  });
}

describe('signing in', () => {
  it('opens without a key when the server runs single-tenant', async () => {
    const api = fakeApi({ 'GET /v1/whoami': () => ({ body: { tenant: 'default', scopes: ['read', 'run', 'operate', 'define'], authRequired: false } }) });
    mount({ baseUrl: 'http://api.test', storage: memoryStorage(), fetch: api.fetch });
    expect(await screen.findByText(/signed in as default/)).toBeTruthy();
    expect(screen.getByText(/key none/)).toBeTruthy();
  });

  it('shows the sign-in form without asking whoami when the page says the API checks keys and none is stored', async () => {
    const api = keyedApi();
    mount({ baseUrl: 'http://api.test', storage: memoryStorage(), fetch: api.fetch, authRequired: true });
    await screen.findByLabelText('API key');
    expect(api.calls).toEqual([]);
    expect(screen.queryByRole('alert')).toBeNull();
    await userEvent.type(screen.getByLabelText('API key'), 'k-dash');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText(/signed in as acme with \[read\]/)).toBeTruthy();
    expect(api.calls).toEqual(['GET /v1/whoami']);
  });

  it('asks for a key when the server wants one, then sends it as the bearer and keeps it for the tab', async () => {
    const api = keyedApi();
    const storage = memoryStorage();
    mount({ baseUrl: 'http://api.test', storage, fetch: api.fetch });
    const input = await screen.findByLabelText('API key');
    // no refusal is shown for the keyless first probe
    expect(screen.queryByRole('alert')).toBeNull();
    await userEvent.type(input, 'k-dash');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText(/signed in as acme with \[read\] key k-dash/)).toBeTruthy();
    expect(api.sent.at(-1)!.headers.get('authorization')).toBe('Bearer k-dash');
    expect(storage.map.get(API_KEY_STORAGE)).toBe('k-dash');
  });

  it('shows an unknown key’s refusal as code: message and keeps nothing', async () => {
    const storage = memoryStorage();
    mount({ baseUrl: 'http://api.test', storage, fetch: keyedApi().fetch });
    await userEvent.type(await screen.findByLabelText('API key'), 'k-wrong');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Unauthorized: missing or unknown API key');
    expect(storage.map.has(API_KEY_STORAGE)).toBe(false);
  });

  it('refuses a key that cannot read, saying which scope it lacks', async () => {
    mount({ baseUrl: 'http://api.test', storage: memoryStorage(), fetch: keyedApi().fetch });
    await userEvent.type(await screen.findByLabelText('API key'), 'k-ops');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe("Forbidden: this key lacks the 'read' scope");
  });

  it('signs in again from the stored key after a reload, and drops a stored key the server no longer knows', async () => {
    const api = keyedApi();
    mount({ baseUrl: 'http://api.test', storage: memoryStorage({ [API_KEY_STORAGE]: 'k-admin' }), fetch: api.fetch });
    expect(await screen.findByText(/signed in as acme with \[read,run,operate,define\]/)).toBeTruthy();
    cleanup();
    const stale = memoryStorage({ [API_KEY_STORAGE]: 'k-revoked' });
    mount({ baseUrl: 'http://api.test', storage: stale, fetch: api.fetch });
    expect((await screen.findByRole('alert')).textContent).toBe('Unauthorized: missing or unknown API key');
    await waitFor(() => expect(stale.map.has(API_KEY_STORAGE)).toBe(false));
  });

  it('says the API did not answer when the request fails', async () => {
    const down: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));
    mount({ baseUrl: 'http://api.test', storage: memoryStorage({ [API_KEY_STORAGE]: 'k-admin' }), fetch: down });
    expect((await screen.findByRole('alert')).textContent).toBe('NetworkError: the API did not answer (is it running?)');
  });
});
