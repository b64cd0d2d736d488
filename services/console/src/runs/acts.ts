/**
 * Operator acts as mutations: each act gets its id when the operator acts (`operationId`
 * in the body where the contract has one, and the `Idempotency-Key` header always), a
 * refusal stays on screen as `code: message` until the next try, and a success re-reads
 * the run at once (the live channel would too, a moment later).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { FlowlineClient } from '@flowline/client';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';

/** An act on run `runId`: `fn(client, operationId, args)`. */
export function useAct<A = void>(runId: string, fn: (client: FlowlineClient, operationId: string, args: A) => Promise<unknown>) {
  return useKeyedAct<A>(['run', runId], fn);
}

/** An act whose success (or refusal) re-reads every query under `queryKey` (a resource page's list). */
export function useKeyedAct<A = void>(queryKey: readonly unknown[], fn: (client: FlowlineClient, operationId: string, args: A) => Promise<unknown>) {
  const client = useClient();
  const qc = useQueryClient();
  const m = useMutation({
    mutationFn: ({ operationId, args }: { operationId: string; args: A }) => fn(client, operationId, args),
    onSettled: () => qc.invalidateQueries({ queryKey }),
  });
  return {
    /** acts now, under a fresh operation id */
    run: (args: A) => m.mutate({ operationId: newOperationId(), args }),
    /** acts and resolves true on success (dialogs close on it) */
    runAsync: async (args: A) => {
      try {
        await m.mutateAsync({ operationId: newOperationId(), args });
        return true;
      } catch {
        return false;
      }
    },
    pending: m.isPending,
    error: m.error,
    reset: m.reset,
  };
}

/** An act as {@link useAct} gives it. */
export type Act<A> = ReturnType<typeof useKeyedAct<A>>;

/**
 * The two ends of a dialog over an act: `submit(args)` acts and closes the dialog once the act
 * succeeds (a refusal keeps it open, showing why); `close()` forgets the act's refusal and closes.
 */
export function actDialog<A>(act: Act<A>, close: () => void) {
  return {
    submit: (args: A) => void act.runAsync(args).then((ok) => ok && close()),
    close: () => {
      act.reset();
      close();
    },
  };
}
