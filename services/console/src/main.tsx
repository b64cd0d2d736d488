/**
 * The console's first script, kept small: it sends the first view's reads (whoami and a
 * linked run) and asks for the run view's code, then loads and mounts the app, so the
 * network and the server work while the app's code is fetched and compiled.
 */
import { linkedRunId, startEarlyReads } from './boot/early';
import { API_KEY_STORAGE } from './session/storage-key';
import './styles.css';
import { applyTheme } from './ui/theme';

applyTheme();

const baseUrl = window.location.origin;
const runId = linkedRunId(window.location);
// a linked run view: its code loads beside the app's, not after it
if (runId) void import('./runs/RunPage');
// the API says in the page whether it checks keys: with no key yet, the sign-in form shows at once
// (`session`: no key needed now, a single sign-on session cookie answers whoami)
const authRequired = document.querySelector('meta[name="flowline-auth"]')?.getAttribute('content') === 'required';
const apiKey = window.sessionStorage.getItem(API_KEY_STORAGE);
const early = startEarlyReads({ baseUrl, apiKey, runId, whoami: apiKey !== null || !authRequired });
const root = document.getElementById('root')!;

import('./boot/mount')
  .then(({ mount }) => mount(root, { baseUrl, storage: window.sessionStorage, fetch: early.fetch, authRequired }))
  .catch((err: unknown) => {
    root.textContent = `The console could not load: ${err instanceof Error ? err.message : String(err)}. Reload the page to try again.`;
  });
