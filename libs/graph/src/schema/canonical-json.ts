import { JsonNumber } from '../conditions';

/**
 * Canonical JSON: object members sorted by key (code unit order), no whitespace; exact
 * numbers (JsonNumber, bigint) written as their integer/decimal text.
 * Two structurally equal JSON values always produce the same string, whatever
 * their member order. Iterative, so a deeply nested value cannot overflow the stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or a literal token to emit.
  const stack: Array<{ v: unknown } | { t: string }> = [{ v: value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('t' in item) {
      out.push(item.t);
      continue;
    }
    const v = item.v;
    if (v instanceof JsonNumber) {
      out.push(v.text);
      continue;
    }
    if (typeof v === 'bigint') {
      out.push(v.toString());
      continue;
    }
    if (v === null || typeof v !== 'object') {
      const s = JSON.stringify(v);
      out.push(s === undefined ? 'null' : s);
      continue;
    }
    if (Array.isArray(v)) {
      const parts: Array<{ v: unknown } | { t: string }> = [{ t: '[' }];
      v.forEach((el, i) => {
        if (i > 0) parts.push({ t: ',' });
        parts.push({ v: el });
      });
      parts.push({ t: ']' });
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
      continue;
    }
    const keys = Object.keys(v).sort();
    const parts: Array<{ v: unknown } | { t: string }> = [{ t: '{' }];
    keys.forEach((k, i) => {
      parts.push({ t: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
      parts.push({ v: (v as Record<string, unknown>)[k] });
    });
    parts.push({ t: '}' });
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
  }
  return out.join('');
}

/**
 * Does `value` hold a lossless-parser JsonNumber or a bigint anywhere? Iterative; only
 * containers are stacked (one push each, so an array of any length is fine).
 */
export function hasExactNumbers(value: unknown): boolean {
  const stack: object[] = [];
  const visit = (v: unknown): boolean => {
    if (typeof v === 'bigint') return true;
    if (v !== null && typeof v === 'object') stack.push(v);
    return false;
  };
  if (visit(value)) return true;
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v instanceof JsonNumber) return true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (visit(v[i])) return true;
    } else {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) if (visit(o[k])) return true;
    }
  }
  return false;
}
