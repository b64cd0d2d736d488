import { describe, expect, it } from 'vitest';
import { parseMetadataLines } from './StartRunDialog';

describe('run metadata lines', () => {
  it('reads one key: value per line, blank lines ignored, the value may hold colons', () => {
    expect(parseMetadataLines('')).toEqual({ ok: true, value: undefined });
    expect(parseMetadataLines('customer: acme\n\n batch : nightly-42 \nurl: https://x.test/a')).toEqual({
      ok: true,
      value: { customer: 'acme', batch: 'nightly-42', url: 'https://x.test/a' },
    });
  });

  it('names the first line that is not a pair', () => {
    expect(parseMetadataLines('a: 1\nnope\nb: 2')).toEqual({ ok: false, line: 2 });
    expect(parseMetadataLines(': v')).toEqual({ ok: false, line: 1 });
    expect(parseMetadataLines('k:')).toEqual({ ok: false, line: 1 });
  });
});
