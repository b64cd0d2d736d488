/**
 * docs/guides/schedules.md cannot rot: its `bash` blocks (a delayed start moved and released, a
 * schedule upserted, refused, previewed across a DST change, triggered, paused, backfilled, and
 * previewed from the CLI) run, in order, as one bash script against a whole cluster, and every
 * `text` block must appear in what they print (./page-commands.ts).
 */
import { describe } from 'vitest';
import { pageCommandsTest } from './page-commands';

describe('the schedules guide', () => {
  pageCommandsTest('docs/guides/schedules.md', 8);
});
