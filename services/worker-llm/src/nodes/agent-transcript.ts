/**
 * An Agent's checkpointed transcript: every model answer, tool result, approval (asked and
 * decided) and steering message is written as a step before the loop moves on, so a new
 * invocation of the node resumes where the last one stopped: its recorded model answers are
 * not asked again and its recorded tool calls are not run again. The steps of one life of the
 * node (its `generation`, from the work item) are replayed in order; an operator's retry
 * starts a new life, whose steps continue the numbering so every step number — and so every
 * tool call's idempotency key `<runId>:<nodeKey>:<step>` — stays unique for the node.
 */
import { FlowlineNodeError, type JsonObject, type WorkItem } from '@flowline/graph';
import { appendAgentStep, loadAgentSteps, type AgentStep, type AgentStepKind, type Queryable } from '@flowline/db';

/** Bytes of transcript an Agent may write in one life when MAX_AGENT_TRANSCRIPT_BYTES is not set. */
export const DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES = 8 * 1024 * 1024;

/** Where an Agent's steps are kept: Postgres in a deployed worker (`pgAgentSteps`). */
export interface AgentStepStore {
  /** every step of the node, oldest first */
  load(runId: string, nodeKey: string): Promise<AgentStep[]>;
  /** writes a step, or returns the one already stored at its number (the first writer wins); null when the run is gone */
  append(runId: string, nodeKey: string, step: Omit<AgentStep, 'bytes'>): Promise<AgentStep | null>;
}

/** Steps kept in Postgres (`agent_steps`), sealed per step when ENCRYPTION_KEY is set. */
export function pgAgentSteps(db: Queryable): AgentStepStore {
  return {
    load: (runId, nodeKey) => loadAgentSteps(db, runId, nodeKey),
    append: (runId, nodeKey, step) => appendAgentStep(db, runId, nodeKey, step),
  };
}

/**
 * Steps kept in this process only: for a worker without Postgres (tests, benches). Nothing
 * survives the process, so a kill replays nothing.
 */
export function memoryAgentSteps(): AgentStepStore {
  const all = new Map<string, AgentStep[]>();
  return {
    load: (runId, nodeKey) => Promise.resolve([...(all.get(`${runId}/${nodeKey}`) ?? [])]),
    append(runId, nodeKey, step) {
      const list = all.get(`${runId}/${nodeKey}`) ?? [];
      all.set(`${runId}/${nodeKey}`, list);
      const found = list.find((s) => s.step === step.step);
      if (found) return Promise.resolve(found);
      const stored: AgentStep = { ...step, bytes: Buffer.byteLength(JSON.stringify(step.payload), 'utf8') };
      list.push(stored);
      return Promise.resolve(stored);
    },
  };
}

/** The transcript grew past MAX_AGENT_TRANSCRIPT_BYTES: not retryable (a retry resumes the same transcript). */
export function transcriptTooLarge(bytes: number, max: number): FlowlineNodeError {
  return new FlowlineNodeError('ValidationFailed', `the agent's transcript would hold ${bytes} bytes, over MAX_AGENT_TRANSCRIPT_BYTES (${max})`, {
    code: 'AgentTranscriptTooLarge',
  });
}

/** A recorded step the loop does not reach the same way: the node's config changed under its transcript. */
export function transcriptDiverged(): FlowlineNodeError {
  return new FlowlineNodeError('ValidationFailed', "the agent's transcript does not match its loop (was its config changed?)", { code: 'LlmRequestInvalid' });
}

/** The transcript of one Agent invocation: the recorded steps to replay, then the live ones. */
export class Transcript {
  private cursor = 0;
  private bytes: number;
  private next: number;

  private constructor(
    private readonly store: AgentStepStore,
    private readonly item: WorkItem,
    private readonly maxBytes: number,
    /** this life's steps, oldest first */
    readonly recorded: readonly AgentStep[],
    lastStep: number,
  ) {
    this.bytes = recorded.reduce((n, s) => n + s.bytes, 0);
    this.next = lastStep + 1;
  }

  static async open(store: AgentStepStore, item: WorkItem, maxBytes: number): Promise<Transcript> {
    const all = await store.load(item.runId, item.nodeKey);
    const generation = item.agent?.generation ?? 1;
    const mine = all.filter((s) => s.generation === generation);
    const last = all.reduce((n, s) => Math.max(n, s.step), 0);
    return new Transcript(store, item, maxBytes, mine, last);
  }

  /** True while recorded steps remain to replay. */
  get replaying(): boolean {
    return this.cursor < this.recorded.length;
  }

  /** Whether anything of this life was recorded before this invocation. */
  get resumed(): boolean {
    return this.recorded.length > 0;
  }

  /** The next recorded step when it is of `kind` (and passes `match`): consumed and returned; else undefined. */
  take(kind: AgentStepKind, match: (p: JsonObject) => boolean = () => true): AgentStep | undefined {
    const s = this.recorded[this.cursor];
    if (s === undefined || s.kind !== kind || !match(s.payload)) return undefined;
    this.cursor++;
    return s;
  }

  /** The step number the next written step gets (a tool call's idempotency position). */
  get nextStep(): number {
    return this.next;
  }

  /**
   * Writes the next step and returns what is stored at its number: a concurrent invocation
   * of the same node may have written it first, and then its step is the one to go on with.
   * @throws AgentTranscriptTooLarge past MAX_AGENT_TRANSCRIPT_BYTES
   */
  async write(kind: AgentStepKind, payload: JsonObject): Promise<AgentStep> {
    const size = Buffer.byteLength(JSON.stringify(payload), 'utf8');
    if (this.bytes + size > this.maxBytes) throw transcriptTooLarge(this.bytes + size, this.maxBytes);
    const step = this.next;
    const stored = await this.store.append(this.item.runId, this.item.nodeKey, {
      step,
      generation: this.item.agent?.generation ?? 1,
      attempt: this.item.attempt,
      kind,
      payload,
    });
    if (stored === null) throw new FlowlineNodeError('Cancelled', 'the run of this node is gone', { code: 'LlmCancelled' });
    // another invocation of this node (a duplicate job) went another way at this step: this one
    // stops, and the next replays what is stored
    if (stored.kind !== kind) throw new FlowlineNodeError('Interrupted', 'another invocation of this agent moved its transcript on', { code: 'LlmInterrupted' });
    this.bytes += stored.bytes;
    this.next = step + 1;
    return stored;
  }

}
