import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configureEncryption,
  digestOf,
  EncryptedValueError,
  openJson,
  openJsonText,
  openText,
  parseEncryptionKey,
  sealJson,
  sealJsonText,
  sealText,
} from './crypto';

const AT = { table: 'runs', column: 'input', row: 'r1' };

afterEach(() => configureEncryption(undefined));

describe('crypto', () => {
  it('takes the key formats the ENCRYPTION_KEY option validates: 64 hex characters, else base64 of 32 bytes', () => {
    const raw = randomBytes(32);
    for (const k of [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64')]) {
      expect(parseEncryptionKey(k).equals(raw)).toBe(true);
    }
    expect(() => parseEncryptionKey('short')).toThrow();
    expect(() => parseEncryptionKey(randomBytes(16).toString('base64'))).toThrow();
  });

  it('is the identity without a key', () => {
    const v = { a: 1 };
    expect(sealJson(v, AT)).toBe(v);
    expect(sealJsonText('{"a":1}', AT)).toBe('{"a":1}');
    expect(sealText('hi', AT)).toBe('hi');
    expect(digestOf('x')).toBeNull();
  });

  it('keeps without a key a document jsonb would rewrite as its own text, and reads it back as written', () => {
    const text = '{"x":1e131071,"y":[1E-400]}';
    const stored = sealJsonText(text, AT);
    expect(stored).toBe(JSON.stringify({ $json: 'v1', text }));
    expect(openJsonText(stored, AT)).toBe(text);
    // as jsonb gives it back (a space after each colon and comma)
    expect(openJsonText(JSON.stringify(JSON.parse(stored), null, 1), AT)).toBe(text);
    const value = { x: 1e-300 };
    const sealed = sealJson(value, AT);
    expect(sealed).toEqual({ $json: 'v1', text: '{"x":1e-300}' });
    expect(openJson(sealed, AT)).toEqual(value);
    // a document that merely looks like such an envelope is kept in one too: it reads back as itself
    const lookalike = '{"$json":"v1","text":"{\\"a\\":1}"}';
    expect(openJsonText(sealJsonText(lookalike, AT), AT)).toBe(lookalike);
    expect(openJson(sealJson(JSON.parse(lookalike), AT), AT)).toEqual(JSON.parse(lookalike));
  });

  it('round-trips with a key, bound to table, column and row', () => {
    configureEncryption(randomBytes(32).toString('base64'));
    const sealed = sealJson({ secret: 'x' }, AT);
    expect(JSON.stringify(sealed)).not.toContain('secret');
    expect(openJson(sealed, AT)).toEqual({ secret: 'x' });
    expect(openJsonText(sealJsonText('{"n":12345678901234567890}', AT), AT)).toBe('{"n":12345678901234567890}');
    expect(openText(sealText('{"$enc":"v1"} hello', AT), AT)).toBe('{"$enc":"v1"} hello');
    for (const other of [{ ...AT, row: 'r2' }, { ...AT, column: 'output' }, { ...AT, table: 'node_runs' }]) {
      expect(() => openJson(sealed, other)).toThrow(EncryptedValueError);
    }
    // another key
    configureEncryption(randomBytes(32).toString('hex'));
    expect(() => openJson(sealed, AT)).toThrow(/runs\.input of row r1 cannot be decrypted/);
    // plaintext (mixed mode) passes through
    expect(openJson({ plain: true }, AT)).toEqual({ plain: true });
    expect(openText('plain text', AT)).toBe('plain text');
  });
});
