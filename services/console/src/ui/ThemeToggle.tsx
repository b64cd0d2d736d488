/**
 * The header's light/dark switch: pressed while the dark theme shows. It reads the theme
 * from <html> (which the system's preference may change under it), so a click always turns
 * to the other of what is on screen.
 */
import { useSyncExternalStore } from 'react';
import { chooseTheme } from './theme';

function subscribe(onChange: () => void): () => void {
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return () => observer.disconnect();
}

const shownDark = () => document.documentElement.dataset.theme === 'dark';

export function ThemeToggle() {
  const dark = useSyncExternalStore(subscribe, shownDark, () => false);
  return (
    <button
      type="button"
      className="btn btn-ghost btn-sm theme-toggle"
      aria-pressed={dark}
      title={dark ? 'Switch to the light theme' : 'Switch to the dark theme'}
      onClick={() => chooseTheme(shownDark() ? 'light' : 'dark')}
    >
      <span aria-hidden="true">{dark ? '☾ ' : '☀ '}</span>
      Dark theme
    </button>
  );
}
