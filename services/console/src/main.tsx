import './zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import type { ConsoleConfig } from './session/session';
import './styles.css';

const config: ConsoleConfig = { baseUrl: window.location.origin, storage: window.sessionStorage };

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App config={config} />
  </StrictMode>,
);
