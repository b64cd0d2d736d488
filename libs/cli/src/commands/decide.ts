/** `flowline decide`: a person's decision on a Pause / ChatInput gate. */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { jsonArgument } from '../args';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';

export function registerDecide(program: Command, s: Session, wrap: Wrap): void {
  program
    .command('decide')
    .description('decide a node waiting on a person (Approve, Reject; Answer with --payload \'{"text":…}\' for ChatInput)')
    .argument('<runId>', 'run id')
    .argument('<nodeKey>', 'the waiting node')
    .argument('<decision>', 'Approve | Reject | Answer')
    .option('--comment <text>', 'comment (some gates require one)')
    .option('--payload <json>', 'payload: inline JSON or @file')
    .option('--operation-id <id>', 'idempotency key (default: a fresh UUID)')
    .action(
      wrap(async (runId: string, nodeKey: string, decision: string, o: { comment?: string; payload?: string; operationId?: string }) => {
        const payload = o.payload !== undefined ? await jsonArgument(o.payload, s.io.cwd, '--payload') : undefined;
        const operationId = o.operationId ?? randomUUID();
        const answer = await s.client().runs.decide(runId, nodeKey, {
          operationId,
          decision,
          ...(o.comment !== undefined ? { comment: o.comment } : {}),
          ...(payload !== undefined ? { payload } : {}),
        });
        s.print(answer, () => `decided ${nodeKey}: ${decision} (operation ${operationId})\n`);
        return EXIT.ok;
      }),
    );
}
