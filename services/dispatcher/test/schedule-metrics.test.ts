import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '@flowline/runtime';
import { createScheduleMetrics } from '../src/schedule-fire';

describe('flowline_schedule_slots_total', () => {
  it('counts decided slots by outcome on the ops registry, and ignores empty counts', async () => {
    const registry = createMetricsRegistry();
    const m = createScheduleMetrics(registry);
    m.slots('started', 2);
    m.slots('skippedCatchup', 35);
    m.slots('skippedOverlap', 0);
    const text = await registry.metrics();
    expect(text).toContain('flowline_schedule_slots_total{outcome="started"} 2');
    expect(text).toContain('flowline_schedule_slots_total{outcome="skippedCatchup"} 35');
    expect(text).not.toContain('outcome="skippedOverlap"');
  });
});
