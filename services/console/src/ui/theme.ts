/**
 * Light or dark: the person's choice from the header's toggle, remembered in localStorage,
 * else the system's (`prefers-color-scheme`, followed when it changes). The choice is
 * `data-theme` on <html>, which the stylesheet's dark palette keys on; it is set before the
 * app mounts so the first paint is already in the right colours.
 */
export type Theme = 'light' | 'dark';

export const THEME_STORAGE = 'flowline.theme';

const DARK_QUERY = '(prefers-color-scheme: dark)';

/** The remembered choice, or null when the person has not chosen. */
export function storedTheme(storage: Pick<Storage, 'getItem'> = window.localStorage): Theme | null {
  const v = storage.getItem(THEME_STORAGE);
  return v === 'light' || v === 'dark' ? v : null;
}

/** The theme shown: the remembered choice, else the system's. */
export function currentTheme(): Theme {
  return storedTheme() ?? (window.matchMedia?.(DARK_QUERY).matches ? 'dark' : 'light');
}

/** Sets the shown theme on <html> and follows the system's until a choice is remembered. */
export function applyTheme(): void {
  const root = document.documentElement;
  root.dataset.theme = currentTheme();
  window.matchMedia?.(DARK_QUERY).addEventListener('change', () => {
    if (storedTheme() === null) root.dataset.theme = currentTheme();
  });
}

/** Remembers `theme` and shows it. */
export function chooseTheme(theme: Theme): void {
  window.localStorage.setItem(THEME_STORAGE, theme);
  document.documentElement.dataset.theme = theme;
}
