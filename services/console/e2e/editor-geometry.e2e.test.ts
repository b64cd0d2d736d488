/**
 * The editor's geometry in real headless Chromium against a real cluster, measured with bounding
 * boxes at 1440×900 and 1100×760: the canvas ends where the inspector begins, and after fit-view
 * every node of a sample lies inside the canvas (none behind the inspector or the palette); the
 * minimap and its drawing stay inside the canvas; selecting a node keeps the zoom; a node added
 * from the palette lands inside the visible canvas on no other node, nor under the minimap or
 * the zoom controls; the inputs of a binding row
 * do not overlap (soft expectations: a run lists every misplaced thing, not only the first).
 * axe-core finds no serious or critical violation. Screenshots:
 * artifacts/editor-geometry-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { SAMPLES } from '../src/editor/samples';
import { KEYS, consoleSession, screenshot, seriousViolations, signIn } from './console-cluster';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function box(l: Locator): Promise<Box> {
  const b = await l.boundingBox();
  if (!b) throw new Error(`no box for ${l.toString()}`);
  return b;
}

/** `inner` lies within `outer` (1 px of rounding allowed). */
const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 1 && inner.y >= outer.y - 1 && inner.x + inner.width <= outer.x + outer.width + 1 && inner.y + inner.height <= outer.y + outer.height + 1;

/** The two boxes share area (touching edges do not count). */
const overlap = (a: Box, b: Box) => a.x < b.x + b.width - 1 && b.x < a.x + a.width - 1 && a.y < b.y + b.height - 1 && b.y < a.y + a.height - 1;

const zoomOf = (page: Page) =>
  page.locator('.editor .react-flow__viewport').evaluate((el) => new DOMMatrixReadOnly(getComputedStyle(el).transform).a);

describe('the editor’s geometry', () => {
  const s = consoleSession();

  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 1100, height: 760 },
  ]) {
    it(`at ${viewport.width}×${viewport.height}: nodes, minimap and new nodes inside the canvas, selection keeps the zoom, binding inputs apart`, async () => {
      // a page of its own (the one before was left with unsaved changes), signed in: the key is per tab
      const page = await s.context.newPage();
      await page.setViewportSize(viewport);
      await signIn(page, s.c.baseUrl, KEYS.admin);
      for (const sample of SAMPLES) {
        const id = (await s.c.admin.definitions.create({ name: `geometry ${sample.name}`, graph: sample.graph })).id;
        await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${id}`);
        await page.locator('.react-flow__node').first().waitFor();
        await page.waitForTimeout(400);
        const canvas = await box(page.locator('.editor .canvas'));
        const inspector = await box(page.getByRole('complementary', { name: 'Inspector' }));
        const palette = await box(page.getByRole('navigation', { name: 'Node palette' }));
        expect.soft(canvas.x + canvas.width, `${sample.id}: the canvas ends where the inspector begins`).toBeLessThanOrEqual(inspector.x + 1);
        expect.soft(canvas.x, `${sample.id}: the canvas begins where the palette ends`).toBeGreaterThanOrEqual(palette.x + palette.width - 1);
        for (const n of await page.locator('.react-flow__node').all()) {
          const b = await box(n);
          expect.soft(inside(b, canvas), `${sample.id}: node ${await n.getAttribute('data-id')} inside the canvas`).toBe(true);
        }
        const minimap = await box(page.locator('.react-flow__minimap'));
        expect.soft(inside(minimap, canvas), `${sample.id}: the minimap inside the canvas`).toBe(true);
        expect.soft(inside(await box(page.locator('.react-flow__minimap svg')), minimap), `${sample.id}: the minimap's drawing inside its frame`).toBe(true);
        for (const mini of await page.locator('.react-flow__minimap-node').all()) {
          expect.soft(inside(await box(mini), minimap), `${sample.id}: a minimap node inside the minimap`).toBe(true);
        }
      }
      await screenshot(page, `editor-geometry-${viewport.width}`);

      // selecting a node pans at most: the zoom stays
      const before = await zoomOf(page);
      await page.locator('.react-flow__node').first().click();
      await page.locator('.react-flow__node.selected').waitFor();
      await page.waitForTimeout(400);
      expect.soft(await zoomOf(page)).toBeCloseTo(before, 3);

      // nodes added from the palette land in view, on no other node
      const canvas = await box(page.locator('.editor .canvas'));
      for (const kind of ['Tool', 'Condition', 'Wait', 'End']) {
        const count = await page.locator('.react-flow__node').count();
        await page.getByRole('button', { name: `Add ${kind}` }).click();
        await expect.poll(() => page.locator('.react-flow__node').count()).toBe(count + 1);
        await page.waitForTimeout(400);
        const added = page.locator('.react-flow__node.selected');
        const b = await box(added);
        expect.soft(inside(b, canvas), `the new ${kind} inside the visible canvas`).toBe(true);
        for (const overlay of ['.react-flow__minimap', '.react-flow__controls']) {
          expect.soft(overlap(b, await box(page.locator(`.editor ${overlay}`))), `the new ${kind} under ${overlay}`).toBe(false);
        }
        const addedId = await added.getAttribute('data-id');
        for (const n of await page.locator('.react-flow__node').all()) {
          if ((await n.getAttribute('data-id')) === addedId) continue;
          expect.soft(overlap(b, await box(n)), `the new ${kind} on ${await n.getAttribute('data-id')}`).toBe(false);
        }
      }
      await screenshot(page, `editor-geometry-added-${viewport.width}`);

      // a binding row (the Tool's writes): its inputs side by side, not over each other
      await page.locator('.react-flow__node[data-id="tool"]').click();
      const writes = page.locator('[data-testid="member-writes"]');
      await writes.getByLabel('New writes name', { exact: true }).fill('answer');
      await writes.getByLabel('New writes path', { exact: true }).fill('output.json.answer');
      await writes.getByRole('button', { name: 'Add' }).click();
      for (const row of await page.locator('.binding-row').all()) {
        const fields = await row.locator('input, select, button').all();
        const boxes = await Promise.all(fields.map(box));
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect.soft(overlap(boxes[i]!, boxes[j]!), `binding row fields ${i} and ${j}`).toBe(false);
        const rowBox = await box(row);
        for (const b of boxes) expect.soft(inside(b, rowBox), 'a binding field inside its row').toBe(true);
      }
      await screenshot(page, `editor-geometry-binding-${viewport.width}`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.close({ runBeforeUnload: false });
    }, 180_000);
  }
});
