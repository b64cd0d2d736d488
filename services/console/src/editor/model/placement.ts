/**
 * Where a node added from the palette goes: in free space inside the part of the graph the
 * canvas shows, so it is seen at once and covers no other node. Tried first: beside the anchor
 * (the selected node, else the last one), then below it, then every slot of a grid over the
 * view, nearest the view's centre first. When the view has no free slot, its centre.
 */
import { CARD_HEIGHT, CARD_WIDTH } from './canvas';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Space kept between a new card and the others, and from the view's edge. */
export const PLACEMENT_GAP = 24;

const overlaps = (a: Rect, b: Rect, gap: number) =>
  a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;

const within = (r: Rect, view: Rect) => r.x >= view.x && r.y >= view.y && r.x + r.width <= view.x + view.width && r.y + r.height <= view.y + view.height;

/**
 * The top-left corner of a new card of `size` in flow coordinates: inside `view` (the flow
 * rectangle the canvas shows) and clear of every rectangle in `taken`.
 */
export function placeNewNode(o: { view: Rect; taken: Rect[]; anchor: Rect | null; size?: { width: number; height: number } }): { x: number; y: number } {
  const size = o.size ?? { width: CARD_WIDTH, height: CARD_HEIGHT };
  const inner: Rect = { x: o.view.x + PLACEMENT_GAP, y: o.view.y + PLACEMENT_GAP, width: o.view.width - 2 * PLACEMENT_GAP, height: o.view.height - 2 * PLACEMENT_GAP };
  const free = (p: { x: number; y: number }) => {
    const r = { ...p, ...size };
    return within(r, inner) && !o.taken.some((t) => overlaps(r, t, PLACEMENT_GAP));
  };
  const round = (p: { x: number; y: number }) => ({ x: Math.round(p.x), y: Math.round(p.y) });
  if (o.anchor) {
    const a = o.anchor;
    const near = [
      { x: a.x + a.width + 90, y: a.y },
      { x: a.x, y: a.y + a.height + 60 },
      { x: a.x + a.width + 90, y: a.y + a.height + 60 },
      { x: a.x + a.width + 90, y: a.y - a.height - 60 },
    ];
    const hit = near.find(free);
    if (hit) return round(hit);
  }
  const stepX = size.width / 2;
  const stepY = size.height / 2;
  const centre = { x: o.view.x + o.view.width / 2 - size.width / 2, y: o.view.y + o.view.height / 2 - size.height / 2 };
  const slots: Array<{ x: number; y: number }> = [];
  for (let y = inner.y; y + size.height <= inner.y + inner.height; y += stepY) {
    for (let x = inner.x; x + size.width <= inner.x + inner.width; x += stepX) slots.push({ x, y });
  }
  slots.sort((p, q) => Math.hypot(p.x - centre.x, p.y - centre.y) - Math.hypot(q.x - centre.x, q.y - centre.y));
  return round(slots.find(free) ?? centre);
}
