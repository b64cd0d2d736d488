import { describe, expect, it } from 'vitest';
import { shortcutOf, type KeyPress } from './shortcuts';

const press = (key: string, o: Partial<KeyPress> = {}): KeyPress => ({ key, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, typing: false, ...o });

describe('the editor shortcuts', () => {
  it('reads undo, redo, save, search, help and escape', () => {
    expect(shortcutOf(press('z', { ctrlKey: true }))).toBe('undo');
    expect(shortcutOf(press('Z', { ctrlKey: true, shiftKey: true }))).toBe('redo');
    expect(shortcutOf(press('y', { ctrlKey: true }))).toBe('redo');
    expect(shortcutOf(press('z', { metaKey: true }))).toBe('undo');
    expect(shortcutOf(press('s', { ctrlKey: true }))).toBe('save');
    expect(shortcutOf(press('k', { ctrlKey: true }))).toBe('search');
    expect(shortcutOf(press('/'))).toBe('search');
    expect(shortcutOf(press('?', { shiftKey: true }))).toBe('help');
    expect(shortcutOf(press('Escape'))).toBe('escape');
  });

  it('leaves a field its own keys while typing, except save and escape', () => {
    expect(shortcutOf(press('z', { ctrlKey: true, typing: true }))).toBeNull();
    expect(shortcutOf(press('?', { typing: true }))).toBeNull();
    expect(shortcutOf(press('/', { typing: true }))).toBeNull();
    expect(shortcutOf(press('s', { ctrlKey: true, typing: true }))).toBe('save');
    expect(shortcutOf(press('Escape', { typing: true }))).toBe('escape');
  });

  it('ignores other keys and other modifiers', () => {
    expect(shortcutOf(press('z'))).toBeNull();
    expect(shortcutOf(press('z', { ctrlKey: true, altKey: true }))).toBeNull();
    expect(shortcutOf(press('/', { ctrlKey: true }))).toBeNull();
    expect(shortcutOf(press('a'))).toBeNull();
  });
});
