/** The app itself, mounted by the first script (main.tsx) once its early reads are out. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from '../app/App';
import type { ConsoleConfig } from '../session/session';

export function mount(root: HTMLElement, config: ConsoleConfig): void {
  createRoot(root).render(
    <StrictMode>
      <App config={config} />
    </StrictMode>,
  );
}
