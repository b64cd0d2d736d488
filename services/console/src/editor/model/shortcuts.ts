/**
 * The editor's keyboard shortcuts, pure: which action a key press asks for. While the author
 * types in a field (an input, a text area, the JSON editor) the field keeps its own keys —
 * its own undo included — and only Ctrl+S (save) and Escape reach the editor.
 */
export type ShortcutAction = 'undo' | 'redo' | 'save' | 'escape' | 'help' | 'search';

export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  /** focus is in a field that takes text */
  typing: boolean;
}

/** The shortcut sheet's rows: keys as shown, and what they do. */
export const SHORTCUTS: ReadonlyArray<{ keys: string; does: string }> = [
  { keys: 'Ctrl+Z', does: 'Undo the last change to the graph' },
  { keys: 'Ctrl+Shift+Z or Ctrl+Y', does: 'Redo what was undone' },
  { keys: 'Ctrl+S', does: 'Save (a new version)' },
  { keys: 'Ctrl+K or /', does: 'Find a node by key or label and jump to it' },
  { keys: 'Escape', does: 'Close the dialog, else clear the selection' },
  { keys: 'Delete or Backspace', does: 'Remove the selected node or edge' },
  { keys: 'Arrow keys', does: 'Move the selected node' },
  { keys: '?', does: 'Show this sheet' },
];

export function shortcutOf(k: KeyPress): ShortcutAction | null {
  const mod = k.ctrlKey || k.metaKey;
  const key = k.key.length === 1 ? k.key.toLowerCase() : k.key;
  if (mod && !k.altKey && key === 's') return 'save';
  if (k.key === 'Escape') return 'escape';
  if (k.typing) return null;
  if (mod && !k.altKey && key === 'z') return k.shiftKey ? 'redo' : 'undo';
  if (mod && !k.altKey && !k.shiftKey && key === 'y') return 'redo';
  if (mod && !k.altKey && !k.shiftKey && key === 'k') return 'search';
  if (mod || k.altKey) return null;
  if (k.key === '?') return 'help';
  if (k.key === '/') return 'search';
  return null;
}

/** True when `el` takes typed text (so single keys belong to it). */
export function isTypingTarget(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file'].includes((el as HTMLInputElement).type);
  return (el as HTMLElement).isContentEditable === true || el.closest('[contenteditable="true"], .cm-editor') !== null;
}
