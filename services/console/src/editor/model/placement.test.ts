import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CARD_HEIGHT, CARD_WIDTH } from './canvas';
import { placeNewNode, PLACEMENT_GAP, type Rect } from './placement';

const card = (x: number, y: number): Rect => ({ x, y, width: CARD_WIDTH, height: CARD_HEIGHT });
const hits = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('placeNewNode', () => {
  const view: Rect = { x: 0, y: 0, width: 1200, height: 700 };

  it('goes beside the anchor when that is free and in view', () => {
    expect(placeNewNode({ view, taken: [card(100, 100)], anchor: card(100, 100) })).toEqual({ x: 100 + CARD_WIDTH + 90, y: 100 });
  });

  it('does not go beside an anchor whose right is taken or out of view: a free slot in view instead', () => {
    const anchor = card(900, 300);
    const at = placeNewNode({ view, taken: [anchor, card(100, 300)], anchor });
    const placed = card(at.x, at.y);
    expect(placed.x + placed.width).toBeLessThanOrEqual(view.width);
    expect(hits(placed, anchor)).toBe(false);
  });

  it('always lands inside the view and, while the view has room, on no other card', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ x: fc.integer({ min: -400, max: 1400 }), y: fc.integer({ min: -300, max: 900 }) }), { maxLength: 8 }),
        fc.boolean(),
        (spots, useAnchor) => {
          const taken = spots.map((p) => card(p.x, p.y));
          const at = placeNewNode({ view, taken, anchor: useAnchor && taken.length > 0 ? taken.at(-1)! : null });
          const placed = card(at.x, at.y);
          expect(placed.x).toBeGreaterThanOrEqual(view.x);
          expect(placed.y).toBeGreaterThanOrEqual(view.y);
          expect(placed.x + placed.width).toBeLessThanOrEqual(view.x + view.width);
          expect(placed.y + placed.height).toBeLessThanOrEqual(view.y + view.height);
          // eight cards cannot fill a 1200×700 view: there is always a free slot
          for (const t of taken) expect(hits({ ...placed, x: placed.x - PLACEMENT_GAP / 2, width: placed.width + PLACEMENT_GAP }, t)).toBe(false);
        },
      ),
    );
  });

  it('falls back to the centre of a view with no room', () => {
    const tiny: Rect = { x: 50, y: 50, width: 200, height: 60 };
    expect(placeNewNode({ view: tiny, taken: [], anchor: null })).toEqual({ x: Math.round(150 - CARD_WIDTH / 2), y: Math.round(80 - CARD_HEIGHT / 2) });
  });
});
