/**
 * docs/guides/versions.md cannot rot: its `bash` blocks (a run parked on a Pause, a second
 * version diffed against the first, the run migrated dry then for real and approved through the
 * new node, an incompatible migration refused with its reasons) run, in order, as one bash
 * script against a whole cluster, and every `text` block must appear in what they print
 * (./page-commands.ts).
 */
import { describe } from 'vitest';
import { pageCommandsTest } from './page-commands';

describe('the versions guide', () => {
  pageCommandsTest('docs/guides/versions.md', 8);
});
