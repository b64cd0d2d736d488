import './zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import type { ConsoleConfig } from './session/session';
import './styles.css';

// a linked run view: fetch its chunk while the session is being checked, not after
if (window.location.pathname.startsWith('/console/run')) void import('./runs/RunPage');

const config: ConsoleConfig = { baseUrl: window.location.origin, storage: window.sessionStorage };

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App config={config} />
  </StrictMode>,
);
