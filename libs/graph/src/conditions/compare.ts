/**
 * Exact comparison of JSON numbers (CONTRACT §1.2): integers of any size compare as
 * integers, decimals compare by their decimal text (scaled to a common BigInt), and only
 * exponent forms (`1e-7`, `1.5E+300`) fall back to doubles.
 *
 * A `number` stands for its shortest decimal text `String(n)` — the text it was written
 * as in a document — so the literal `0.3` equals the token `0.3` while the token
 * `0.1000000000000000055511151231257827` (a {@link JsonNumber}) is greater than `0.1`.
 * Doubles `String()` prints with an exponent (|n| ≥ 1e21 or < 1e-6) are exponent forms.
 */
import { JsonNumber } from './exact-json';

/** A value the comparison treats as a JSON number. */
export type ExactNumber = number | bigint | JsonNumber;

/** True for a finite number, a bigint or a {@link JsonNumber}; NaN and ±Infinity are not JSON numbers. */
export function isExactNumber(v: unknown): v is ExactNumber {
  return (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint' || v instanceof JsonNumber;
}

function textOf(v: ExactNumber): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'bigint') return v.toString();
  return v.text;
}

function scaled(text: string, scale: number): bigint {
  const dot = text.indexOf('.');
  if (dot < 0) return BigInt(text + '0'.repeat(scale));
  const frac = text.slice(dot + 1);
  return BigInt(text.slice(0, dot) + frac + '0'.repeat(scale - frac.length));
}

function fracLength(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/**
 * Orders two JSON numbers exactly: -1, 0 or 1; null when one side is not a finite number
 * (or an exponent form that is NaN).
 */
export function compareExactNumbers(a: ExactNumber, b: ExactNumber): -1 | 0 | 1 | null {
  if (!isExactNumber(a) || !isExactNumber(b)) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const ta = textOf(a);
  const tb = textOf(b);
  if (/[eE]/.test(ta) || /[eE]/.test(tb)) {
    const na = Number(ta);
    const nb = Number(tb);
    if (Number.isNaN(na) || Number.isNaN(nb)) return null;
    // Two sides a double cannot tell apart because both overflow (±Infinity) or both
    // underflow (0) are ordered by their written digits and exponent, never spelled out.
    if (na === nb && (na === 0 || !Number.isFinite(na))) return compareScientific(ta, tb);
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  const scale = Math.max(fracLength(ta), fracLength(tb));
  const ia = scaled(ta, scale);
  const ib = scaled(tb, scale);
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/** A number token as sign, significant digits (no leading or trailing zeros) and the exponent of `0.digits`. */
function scientific(text: string): { sign: -1 | 0 | 1; digits: string; exp: number } {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  const int = m?.[2] ?? '';
  const all = int + (m?.[3] ?? '');
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  if (digits === '') return { sign: 0, digits: '', exp: 0 };
  return { sign: m?.[1] === '-' ? -1 : 1, digits, exp: int.length - lead + Number(m?.[4] ?? '0') };
}

/** Orders two number tokens exactly by their decimal forms (linear in their length). */
function compareScientific(a: string, b: string): -1 | 0 | 1 {
  const x = scientific(a);
  const y = scientific(b);
  if (x.sign !== y.sign) return x.sign < y.sign ? -1 : 1;
  if (x.sign === 0) return 0;
  // same sign: order the magnitudes, then flip for negatives
  let mag: -1 | 0 | 1 = x.exp !== y.exp ? (x.exp < y.exp ? -1 : 1) : 0;
  if (mag === 0) {
    const len = Math.max(x.digits.length, y.digits.length);
    const dx = x.digits.padEnd(len, '0');
    const dy = y.digits.padEnd(len, '0');
    mag = dx < dy ? -1 : dx > dy ? 1 : 0;
  }
  return (x.sign * mag) as -1 | 0 | 1;
}

/** Orders two strings by UTF-16 code unit (not locale): "Z" < "a". */
export function compareOrdinal(a: string, b: string): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}
