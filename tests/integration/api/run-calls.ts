/**
 * Calls the API integration tests share: save and update a definition, wait for a run to
 * finish. Not a test file.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { waitFor } from '@flowline/testing';
import type { Harness } from '../../../services/api/test/harness';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are asserted member by member
export type Body = Record<string, any>;

/** Saves `graph` as a new definition (named `<prefix>-<uuid>`); its id. */
export async function defineGraph(h: Harness, graph: unknown, prefix: string): Promise<string> {
  const res = await h.call('POST', '/v1/definitions', { body: { name: `${prefix}-${randomUUID()}`, graph } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** Saves `graph` as the next version of `defId` (now at `version`). */
export async function updateGraph(h: Harness, defId: string, graph: unknown, version: number): Promise<void> {
  const res = await h.call('PUT', `/v1/definitions/${defId}`, { body: { graph, version } });
  expect(res.status).toBe(200);
}

/** The run detail once the run reads Completed, Failed or Cancelled (20 s at most). */
export async function runFinished(h: Harness, runId: string): Promise<Body> {
  return waitFor(
    async () => {
      const d = (await h.call('GET', `/v1/runs/${runId}`)).body as Body;
      return ['Completed', 'Failed', 'Cancelled'].includes(d.run.status) ? d : false;
    },
    { timeoutMs: 20_000, intervalMs: 50, description: `run ${runId} finished` },
  );
}
