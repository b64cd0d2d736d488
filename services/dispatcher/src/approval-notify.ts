/**
 * Approval notifications: when a committed plan opens a Pause whose approval policy lists
 * `notify: [{ webhook }]`, each webhook receives a signed Standard Webhooks POST
 * (`standardwebhooks`: headers webhook-id, webhook-timestamp, webhook-signature) of
 * `{ type: 'approval.requested', timestamp, data }`, `data` naming the run, the gate, its quorums
 * and the links a person acts from: the console's run view, the gate's REST decide URL and each
 * named principal's signed approval link (`links.approve`, when this replica holds the link key).
 *
 * Sent after the commit like every side effect, never inside the tick: a slow or failing
 * receiver delays nothing. The webhook-id is the gate's (run, node, attempt), so a receiver can
 * drop a repeat. Delivery is tried APPROVAL_WEBHOOK_TRIES times with doubling backoff from this
 * replica's memory; a dispatcher that dies before delivering loses that notification (the gate
 * itself is durable and listed by GET /v1/runs/{id}/blockers).
 */
import { Webhook } from 'standardwebhooks';
import type { Logger } from 'pino';
import { approvalPolicyOf, type JsonObject } from '@flowline/graph';
import { approvalLinkPath } from '@flowline/runtime';
import type { CommittedPlan } from './tick';

export interface ApprovalNotifyDeps {
  /** APPROVAL_WEBHOOK_SECRET (`whsec_…`); unset: no notification is sent (each is logged) */
  secret: string | undefined;
  /** PUBLIC_URL: the origin of the API and its console, for the links */
  publicUrl: string | undefined;
  /**
   * The key of approval links (WAITPOINT_SIGNING_KEY, else derived from ENCRYPTION_KEY, as the API
   * derives it); null: the notifications carry no approval links (an API signing from API_KEYS only)
   */
  linkKey: Buffer | null;
  /** per delivery attempt, ms */
  timeoutMs: number;
  tries: number;
  log: Logger;
  fetch?: typeof fetch;
}

/** One notification to deliver. */
export interface ApprovalNotification {
  webhook: string;
  msgId: string;
  body: string;
  runId: string;
  nodeKey: string;
}

/** The notifications the committed plans ask for: one per webhook of each policy gate they opened. */
export function approvalNotificationsOf(committed: CommittedPlan[], publicUrl: string | undefined, linkKey: Buffer | null, now: number): ApprovalNotification[] {
  const base = (publicUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
  const out: ApprovalNotification[] = [];
  for (const { snapshot, plan } of committed) {
    for (const e of plan.events) {
      if (e.kind !== 'gate.requested' || e.nodeKey === null || (e.detail as JsonObject | undefined)?.['approval'] !== true) continue;
      const node = snapshot.graph.nodes.find((n) => n.key === e.nodeKey);
      const parsed = node ? approvalPolicyOf(node.config) : null;
      const policy = parsed?.ok ? parsed.policy : null;
      if (!node || !policy || policy.notify.length === 0) continue;
      const runId = snapshot.run.id;
      const attempt = plan.nodes.find((p) => p.nodeKey === e.nodeKey)?.set.attempt ?? 0;
      const q = `runId=${encodeURIComponent(runId)}&nodeKey=${encodeURIComponent(e.nodeKey)}`;
      const named = [...new Set([...policy.quorums, ...policy.escalate.map((x) => x.addQuorum)].flatMap((x) => ('principals' in x ? x.principals : [])))];
      const key = e.nodeKey;
      // each named principal's own signed link: POST { decision } to it decides as that principal
      const approve = linkKey ? Object.fromEntries(named.map((p) => [p, `${base}${approvalLinkPath(linkKey, runId, key, p)}`])) : null;
      const data = {
        runId, nodeKey: e.nodeKey, tenantId: snapshot.run.tenantId, attempt, prompt: node.config['prompt'] ?? null,
        approveRule: policy.approveRule, rejectRule: policy.rejectRule,
        quorums: policy.quorums.map((x) => ({ name: x.name, min: x.min })),
        timeoutAt: policy.timeoutMs === null ? null : new Date(now + policy.timeoutMs).toISOString(),
        links: {
          console: `${base}/console/run?${q}`,
          decide: `${base}/v1/runs/${runId}/nodes/${encodeURIComponent(e.nodeKey)}/decide`,
          node: `${base}/v1/runs/${runId}/nodes/${encodeURIComponent(e.nodeKey)}`,
          ...(approve ? { approve } : {}),
        },
      };
      const body = JSON.stringify({ type: 'approval.requested', timestamp: new Date(now).toISOString(), data });
      for (const n of policy.notify) out.push({ webhook: n.webhook, msgId: `msg_${runId}_${e.nodeKey}_${attempt}`, body, runId, nodeKey: e.nodeKey });
    }
  }
  return out;
}

/** Builds the notifier; `afterCommit` starts the deliveries and returns at once. */
export function createApprovalNotifier(d: ApprovalNotifyDeps) {
  const signer = d.secret ? new Webhook(d.secret) : null;
  const doFetch = d.fetch ?? fetch;
  const inFlight = new Set<Promise<void>>();

  async function deliver(n: ApprovalNotification): Promise<void> {
    for (let attempt = 1; attempt <= d.tries; attempt++) {
      const at = new Date();
      try {
        const res = await doFetch(n.webhook, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': n.msgId,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': signer!.sign(n.msgId, at, n.body),
          },
          body: n.body,
          signal: AbortSignal.timeout(d.timeoutMs),
        });
        if (res.ok) return;
        d.log.warn({ runId: n.runId, nodeKey: n.nodeKey, status: res.status, attempt }, 'approval webhook refused');
      } catch (err) {
        d.log.warn({ runId: n.runId, nodeKey: n.nodeKey, err: (err as Error).message, attempt }, 'approval webhook failed');
      }
      if (attempt < d.tries) await new Promise((r) => setTimeout(r, 500 * 2 ** (attempt - 1)));
    }
    d.log.error({ runId: n.runId, nodeKey: n.nodeKey }, 'approval webhook given up');
  }

  function afterCommit(committed: CommittedPlan[]): void {
    const list = approvalNotificationsOf(committed, d.publicUrl, d.linkKey, Date.now());
    if (list.length === 0) return;
    if (!signer) {
      for (const n of list) d.log.warn({ runId: n.runId, nodeKey: n.nodeKey }, 'approval notify skipped: APPROVAL_WEBHOOK_SECRET is not set');
      return;
    }
    for (const n of list) {
      const p = deliver(n).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }

  /** Waits for the deliveries under way (shutdown, tests). */
  async function drain(): Promise<void> {
    await Promise.allSettled([...inFlight]);
  }

  return { afterCommit, drain };
}
