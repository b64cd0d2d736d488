/**
 * The one codec of keyset cursors over `(created_at desc, id desc)`: definitions, runs and
 * conversations page with it. A cursor is opaque base64url text of `<tag><created key>|<id>`;
 * the timestamp travels at microsecond precision (as Postgres stores it) so no row is
 * repeated or skipped between pages.
 *
 * Decoding is strict so a crafted cursor answers 400 instead of reaching Postgres: a
 * timestamp that has the right shape but names no instant (February 30, month 13, year
 * 0000, hour 24) would otherwise fail there with SQLSTATE 22008 and surface as a 500.
 */

/** A decoded keyset position: the row's creation key (`YYYY-MM-DDTHH:MM:SS.ffffff`, UTC) and id. */
export interface KeysetPosition {
  createdKey: string;
  id: string;
}

const POSITION_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})\|(.*)$/su;

/** The cursor after a page ending at the row (`createdKey`, `id`); `tag` tells cursor kinds apart. */
export function encodeKeysetCursor(tag: string, createdKey: string, id: string): string {
  return Buffer.from(`${tag}${createdKey}|${id}`, 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeKeysetCursor} with the same `tag`; null when
 * malformed: another tag, a timestamp naming no instant, or an id `isId` refuses.
 */
export function decodeKeysetCursor(cursor: string, tag: string, isId: (id: string) => boolean): KeysetPosition | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(tag)) return null;
  const m = POSITION_RE.exec(text.slice(tag.length));
  if (!m?.[1] || m[2] === undefined || !isUtcInstant(m[1]) || !isId(m[2])) return null;
  return { createdKey: m[1], id: m[2] };
}

/** True when `YYYY-MM-DDTHH:MM:SS.ffffff` names a real instant of years 0001–9999. */
function isUtcInstant(key: string): boolean {
  const [y, mo, d, h, mi, s] = [0, 5, 8, 11, 14, 17].map((at) => Number(key.slice(at, at + (at === 0 ? 4 : 2)))) as [number, number, number, number, number, number];
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s);
  return y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === s;
}
