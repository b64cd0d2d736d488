import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger';
import { redactUrlUserinfo, serializeError } from './redact';

/** A pg `DatabaseError` as the driver builds it: its message and fields echo the statement's content. */
class DatabaseError extends Error {
  severity = 'ERROR';
  code = '22P02';
  detail = 'Token "CANARY-DOC" is invalid.';
  where = "JSON data, line 1: CANARY-DOC\nunnamed portal parameter $6 = '{\"secret\":\"CANARY-DOC\"}'";
  hint = 'CANARY-DOC';
  table = 'runs';
  column = 'input';
  routine = 'json_errsave_error';
  constructor() {
    super('invalid input syntax for type json: "CANARY-DOC"');
    this.name = 'error';
  }
}

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger('test', { destination, level: 'debug' }) };
}

describe('redactUrlUserinfo', () => {
  it('removes the userinfo of every URL in a text, an @ in the password included, and keeps the rest', () => {
    expect(redactUrlUserinfo('connect postgres://flow:pa@ss@db.internal:5432/app failed; redis://:pw@r:6379 too')).toBe(
      'connect postgres://[redacted]@db.internal:5432/app failed; redis://[redacted]@r:6379 too',
    );
    expect(redactUrlUserinfo('http://example.com/a@b and mailto:x@y')).toBe('http://example.com/a@b and mailto:x@y');
  });
});

describe('serializeError', () => {
  it('keeps a Postgres error’s class, SQLSTATE and names, never its message, detail, where, hint or parameters', () => {
    const out = serializeError(new DatabaseError()) as Record<string, unknown>;
    expect(out).toMatchObject({ type: 'DatabaseError', sqlState: '22P02', severity: 'ERROR', table: 'runs', column: 'input', routine: 'json_errsave_error' });
    expect(JSON.stringify(out)).not.toContain('CANARY');
    expect(out.stack).toMatch(/^\s+at /);
  });

  it('keeps an ordinary error’s message and stack with URL userinfo redacted, follows causes, and drops a JSON.parse error’s quoted text', () => {
    let parseError: unknown;
    try {
      JSON.parse('{"doc": CANARY-DOC}');
    } catch (e) {
      parseError = e;
    }
    const err = new Error('cannot reach postgres://u:CANARY-PW@h/db', { cause: parseError });
    const out = serializeError(err) as { message: string; stack: string; cause: { type: string; message?: string } };
    expect(out.message).toBe('cannot reach postgres://[redacted]@h/db');
    expect(out.cause.type).toBe('SyntaxError');
    expect(JSON.stringify(out)).not.toContain('CANARY');
  });

  it('logs a thrown non-error as its type only', () => {
    expect(serializeError('CANARY-DOC')).toEqual({ type: 'string' });
    expect(serializeError({ prompt: 'CANARY-DOC' })).toEqual({ type: 'object' });
  });

  it('is the logger’s serializer of err and error', () => {
    const { lines, logger } = capture();
    logger.error({ err: new DatabaseError() }, 'request failed');
    logger.warn({ error: new Error('redis://u:CANARY-PW@r:6379 down') }, 'redis');
    logger.error(new DatabaseError());
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).not.toContain('CANARY');
    expect(JSON.parse(lines[0]!)).toMatchObject({ err: { type: 'DatabaseError', sqlState: '22P02' }, msg: 'request failed' });
  });
});
