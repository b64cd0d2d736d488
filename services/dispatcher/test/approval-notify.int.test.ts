import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { approvalLinkPath, waitpointSigningKey } from '@flowline/runtime';
import type { GraphEdge, JsonObject } from '@flowline/graph';
import { createHarness, edge, graphOf, node, type Harness } from './harness';

/*
 * A real dispatcher opening policy Pauses: its approval notifications reach a real local HTTP
 * server that verifies them with the `standardwebhooks` package, and a policy timeout settles
 * the gate within the sweep interval with nobody deciding.
 */
const LINK_KEY = 'approval-link-signing-key-for-tests-0123456789';
const SECRET = `whsec_${Buffer.from('approval-notify-test-secret-0123456789').toString('base64')}`;

/** Start → gate (Pause with `approval`) → yes | no. */
function gateGraph(approval: JsonObject) {
  const on = (to: string, value: string): GraphEdge => ({ ...edge('gate', to), condition: { path: 'output.decision', op: 'Eq', value } });
  return graphOf(
    [
      node('start', 'Start', {}),
      node('gate', 'Pause', { prompt: 'Pay the invoice?', allowedDecisions: ['Approve', 'Reject'], approval }),
      node('yes', 'End', { outcome: 'approved' }),
      node('no', 'End', { outcome: 'rejected' }),
    ],
    [edge('start', 'gate'), on('yes', 'Approve'), on('no', 'Reject')],
  );
}

describe('approval gates under a real dispatcher', () => {
  let h: Harness;
  let server: Server;
  let url: string;
  const received: Array<{ body: string; headers: IncomingHttpHeaders; verified: unknown; error: string | null }> = [];

  beforeAll(async () => {
    const verifier = new Webhook(SECRET);
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        let verified: unknown = null;
        let error: string | null = null;
        try {
          verified = verifier.verify(body, req.headers as Record<string, string>);
        } catch (err) {
          error = (err as Error).message;
        }
        received.push({ body, headers: req.headers, verified, error });
        res.writeHead(error ? 400 : 204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/approvals`;
    h = await createHarness();
    await h.startDispatcher('d1', { APPROVAL_WEBHOOK_SECRET: SECRET, PUBLIC_URL: 'https://flowline.example', WAITPOINT_SIGNING_KEY: LINK_KEY });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => server?.close(r));
  });

  it('POSTs a Standard Webhooks notification the receiver verifies, with the console and decide links', async () => {
    const [runId] = await h.createRuns(gateGraph({ quorums: [{ name: 'finance', scope: 'operate', min: 2 }, { name: 'legal', principals: ['key:00000000000000aa'], min: 1 }], notify: [{ webhook: url }] }), [{}]);
    await waitFor(() => received.some((r) => r.body.includes(runId!)), { timeoutMs: 15_000, description: 'notification received' });
    const got = received.find((r) => r.body.includes(runId!))!;
    expect(got.error).toBeNull();
    expect(got.headers['webhook-id']).toBe(`msg_${runId}_gate_1`);
    expect(got.verified).toMatchObject({
      type: 'approval.requested',
      data: {
        runId, nodeKey: 'gate', prompt: 'Pay the invoice?', quorums: [{ name: 'finance', min: 2 }, { name: 'legal', min: 1 }],
        links: {
          console: `https://flowline.example/console/run?runId=${runId}&nodeKey=gate`,
          decide: `https://flowline.example/v1/runs/${runId}/nodes/gate/decide`,
          // the approval link the API verifies: signed with the same key, derived the same way
          approve: { 'key:00000000000000aa': `https://flowline.example${approvalLinkPath(waitpointSigningKey({ signingKey: LINK_KEY }).key, runId!, 'gate', 'key:00000000000000aa')}` },
        },
      },
    });
    // a forged signature is what the receiver refuses: the check is real
    expect(() => new Webhook(SECRET).verify(got.body.replace('Pay', 'Pat'), got.headers as Record<string, string>)).toThrow();
  }, 30_000);

  it('settles the gate with its timeout action within the sweep interval, nobody deciding', async () => {
    const [runId] = await h.createRuns(gateGraph({ quorums: [{ name: 'finance', scope: 'operate', min: 2 }], timeout: 'PT1S', onTimeout: 'approve' }), [{}]);
    const row = async () => (await h.db.pool.query(`SELECT status, output, extract(epoch FROM started_at) * 1000 AS started, extract(epoch FROM finished_at) * 1000 AS finished
                                                      FROM node_runs WHERE run_id = $1 AND node_key = 'gate'`, [runId])).rows[0];
    await waitFor(async () => (await row())?.status === 'Succeeded', { timeoutMs: 15_000, description: 'gate settled by its timeout' });
    const r = await row();
    expect(r.output.output).toMatchObject({ decision: 'Approve', approval: { status: 'approved', by: 'timeout' } });
    // the timeout is 1 s; the sweep interval here is 100 ms
    expect(Number(r.finished) - Number(r.started)).toBeGreaterThanOrEqual(1000);
    expect(Number(r.finished) - Number(r.started)).toBeLessThan(1000 + 1500);
    const run = (await h.db.pool.query(`SELECT status FROM runs WHERE id = $1`, [runId])).rows[0];
    expect(run.status).toBe('Completed');
  }, 30_000);
});
