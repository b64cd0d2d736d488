import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configureEncryption,
  configureEncryptionKeys,
  currentKeyId,
  digestOf,
  digestsOf,
  resealEnvelope,
  type Envelope,
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

  describe('a key ring (rotation)', () => {
    const K1 = randomBytes(32).toString('hex');
    const K2 = randomBytes(32).toString('base64');

    it('seals with the current key, naming its id, and opens a value sealed with any configured key', () => {
      configureEncryptionKeys({ keys: { k1: K1 }, current: 'k1' });
      const old = sealJson({ a: 1 }, AT) as Envelope;
      expect(old.kid).toBe('k1');
      configureEncryptionKeys({ keys: { k1: K1, k2: K2 }, current: 'k2' });
      const next = sealJson({ b: 2 }, AT) as Envelope;
      expect(next.kid).toBe('k2');
      expect(openJson(old, AT)).toEqual({ a: 1 });
      expect(openJson(next, AT)).toEqual({ b: 2 });
      expect(currentKeyId()).toBe('k2');
    });

    it("reads an envelope without an id as the single ENCRYPTION_KEY's ('default'), and keeps writing those without an id", () => {
      configureEncryption(K1);
      const legacy = sealJson({ a: 1 }, AT) as Envelope;
      expect(legacy.kid).toBeUndefined();
      configureEncryptionKeys({ keys: { default: K1, k2: K2 }, current: 'k2' });
      expect(openJson(legacy, AT)).toEqual({ a: 1 });
    });

    it('refuses a value whose key is no longer configured, naming the key and never the content', () => {
      configureEncryptionKeys({ keys: { k1: K1 }, current: 'k1' });
      const old = sealJson({ secret: 'x' }, AT);
      configureEncryptionKeys({ keys: { k2: K2 }, current: 'k2' });
      let err: unknown;
      try {
        openJson(old, AT);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EncryptedValueError);
      expect((err as Error).message).toContain("sealed with key 'k1', which is not configured");
      expect((err as Error).message).not.toContain('secret');
    });

    it('re-seals a value of an older key with the current one, bound to the same place; a current one is left alone', () => {
      configureEncryptionKeys({ keys: { k1: K1 }, current: 'k1' });
      const old = sealJson({ a: 1 }, AT) as Envelope;
      configureEncryptionKeys({ keys: { k1: K1, k2: K2 }, current: 'k2' });
      const moved = resealEnvelope(old, AT)!;
      expect(moved.envelope.kid).toBe('k2');
      expect(moved.plaintext).toBe('{"a":1}');
      expect(resealEnvelope(moved.envelope, AT)).toBeNull();
      configureEncryptionKeys({ keys: { k2: K2 }, current: 'k2' });
      expect(openJson(moved.envelope, AT)).toEqual({ a: 1 });
      expect(() => openJson(moved.envelope, { ...AT, row: 'r2' })).toThrow(EncryptedValueError);
    });

    it('digests under every configured key, the current first: a digest from before a rotation still compares equal', () => {
      configureEncryptionKeys({ keys: { k1: K1 }, current: 'k1' });
      const before = digestOf('x');
      configureEncryptionKeys({ keys: { k1: K1, k2: K2 }, current: 'k2' });
      const all = digestsOf('x');
      expect(all).toHaveLength(2);
      expect(all[1]).toBe(before);
      expect(all[0]).toBe(digestOf('x'));
      expect(all[0]).not.toBe(before);
    });

    it('refuses a ring whose current key is not among its keys', () => {
      expect(() => configureEncryptionKeys({ keys: { k1: K1 }, current: 'k2' })).toThrow("the current encryption key 'k2'");
    });
  });
});
