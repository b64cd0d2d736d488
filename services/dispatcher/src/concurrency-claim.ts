/**
 * Concurrency keys at load time: a Pending keyed run that would otherwise start (its tenant
 * has a slot for it) asks the store for a place of its key; one that gets it starts in this
 * tick. The store's claim is the guard (a place is taken by one run only); this step only
 * tells the loaded snapshot what the claim found, so the planner reads the key as free.
 */
import type { LoadedSnapshot } from '@flowline/db';
import type { DispatchStore } from './store';

/** Claims key places for the loaded runs that ask for one, and marks those placed as free to start. */
export async function claimKeyPlaces(store: DispatchStore, loaded: LoadedSnapshot[]): Promise<void> {
  const asking = loaded.filter((s) => s.concurrencyKeyAvailable === false && s.runSlotAvailable);
  if (asking.length === 0 || !store.claimConcurrency) return;
  const placed = await store.claimConcurrency(asking.map((s) => s.run.id));
  for (const s of asking) {
    if (placed.has(s.run.id)) {
      s.concurrencyKeyAvailable = true;
      s.concurrencyClaimed = true;
    }
  }
}
