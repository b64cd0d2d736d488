/**
 * Migrate a live run to another saved version of its definition (`POST /v1/runs/{id}/migrate`,
 * the `operate` scope). Nothing is sent for real before a dry run: the operator picks the target
 * version and, optionally, a node mapping (old key: new key per line), asks for the plan, and
 * reads it as a table — the verdict, the keyed reasons and one row per node (from → to, kind,
 * status, what the migration does to it). Execute is offered only for a `compatible` plan of
 * exactly the version and mapping now in the form; any change to either asks for a new dry run.
 */
import { useId, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { MigrationPlan, RunSummary } from '@flowline/client';
import { keys } from '../api/queries';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { Loading, RefusalNote } from '../ui/primitives';
import { PairLinesField, parsePairLines } from '../ui/PairLinesField';
import './migrate.css';

const VERDICT_TEXT: Record<MigrationPlan['verdict'], string> = {
  compatible: 'Compatible: the run can move',
  needsMapping: 'Needs a mapping: name the new node of each listed one',
  incompatible: 'Incompatible: the run cannot move to this version',
};

const ACTION_TEXT: Record<MigrationPlan['mapping'][number]['action'], string> = {
  carry: 'carried as it is',
  keep: 'kept live (same invocation, wait or decision)',
  requeue: 'queued again (its work changed)',
  add: 'added (new, pending)',
  drop: 'dropped (never started)',
};

/** The dry run's answer: verdict, reasons and the per-node mapping. */
export function MigrationPlanView({ plan }: { plan: MigrationPlan }) {
  return (
    <div className="migration-plan" data-verdict={plan.verdict}>
      <p className={`migration-verdict verdict-${plan.verdict}`} role="status">
        <strong>{VERDICT_TEXT[plan.verdict]}</strong> (v{plan.fromVersion} → v{plan.toVersion})
      </p>
      {plan.reasons.length > 0 ? (
        <ul className="migration-reasons" aria-label="Reasons">
          {plan.reasons.map((r, i) => (
            <li key={`${r.code}-${r.nodeKey ?? ''}-${i}`} data-reason={r.code}>
              <span className="mono">{r.code}</span>
              {r.nodeKey ? (
                <>
                  {' '}
                  at <span className="mono">{r.nodeKey}</span>
                </>
              ) : null}
              : {r.message}
            </li>
          ))}
        </ul>
      ) : null}
      <table className="table migration-table" aria-label="Node mapping">
        <thead>
          <tr>
            <th scope="col">Node now</th>
            <th scope="col">Node after</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Migration</th>
          </tr>
        </thead>
        <tbody>
          {plan.mapping.map((m) => (
            <tr key={`${m.from ?? ''}→${m.to ?? ''}`} data-from={m.from ?? ''} data-to={m.to ?? ''} data-action={m.action}>
              <td className="mono">{m.from ?? '—'}</td>
              <td className="mono">{m.to ?? '—'}</td>
              <td>{m.kind}</td>
              <td>{m.status}</td>
              <td>{ACTION_TEXT[m.action]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function MigrateDialog({ run, onClose }: { run: RunSummary; onClose(): void }) {
  const client = useClient();
  const qc = useQueryClient();
  const id = useId();
  const versions = useQuery({
    queryKey: ['definitions', run.definitionId, 'versions', 'migrate'],
    queryFn: () => client.definitions.versions(run.definitionId, { limit: 100 }),
  });
  const targets = (versions.data?.items ?? []).filter((v) => v.version !== run.definitionVersion);
  const [picked, setPicked] = useState<number | null>(null);
  // newest other version unless one was picked
  const toVersion = picked ?? targets[0]?.version ?? null;
  const [mapText, setMapText] = useState('');
  const nodeMap = parsePairLines(mapText);
  const request = toVersion !== null && nodeMap.ok ? { toVersion, ...(nodeMap.value ? { nodeMap: nodeMap.value } : {}) } : null;
  const requestText = JSON.stringify(request);
  const dry = useMutation({
    mutationFn: (body: NonNullable<typeof request>) => client.runs.migrate(run.id, { ...body, dryRun: true }),
  });
  const exec = useMutation({
    mutationFn: (body: NonNullable<typeof request>) => client.runs.migrate(run.id, { ...body, dryRun: false }),
    onSuccess: (plan) => {
      void qc.invalidateQueries({ queryKey: keys.run(run.id) });
      if (plan.executed) onClose();
    },
  });
  // the plan shown is the one of the form as it is now, or none (a changed form asks again)
  const [planFor, setPlanFor] = useState<string | null>(null);
  const plan = planFor === requestText ? (exec.data ?? dry.data) : undefined;
  const executable = plan?.verdict === 'compatible' && !plan.executed && !exec.isPending;
  const why = !plan ? 'Run a dry run first' : plan.verdict !== 'compatible' ? 'Only a compatible plan can be executed' : undefined;

  return (
    <Dialog title="Migrate this run" onClose={onClose} wide>
      <form
        className="migrate-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!request) return;
          exec.reset();
          setPlanFor(requestText);
          dry.mutate(request);
        }}
      >
        <p className="muted small">
          The run pins v{run.definitionVersion}. A dry run shows what moving it would do, node by node, and changes nothing; only a compatible plan
          can then be executed.
        </p>
        {versions.isPending ? <Loading label="Reading the versions" /> : null}
        <RefusalNote error={versions.error} title="Could not read the versions" />
        {versions.data && targets.length === 0 ? <p className="muted">This definition has no other saved version to move to.</p> : null}
        {targets.length > 0 ? (
          <div className="field">
            <label htmlFor={`${id}-version`}>Target version</label>
            <select id={`${id}-version`} value={toVersion ?? ''} onChange={(e) => setPicked(Number(e.target.value))}>
              {targets.map((v) => (
                <option key={v.version} value={v.version}>
                  v{v.version} · {v.name} · {v.nodeCount} nodes
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <PairLinesField
          id={`${id}-map`}
          label="Node mapping (optional)"
          text={mapText}
          onText={setMapText}
          parsed={nodeMap}
          placeholder="old-key: new-key"
          help="One old key: new key per line, for nodes the new version renamed or replaced; the others map to their own key."
          shape="old-key: new-key"
        />
        <button type="submit" className="btn" disabled={!request || dry.isPending}>
          {dry.isPending ? 'Planning…' : 'Dry run'}
        </button>
        <RefusalNote error={planFor === requestText ? (exec.error ?? dry.error) : null} title="Refused" />
        {plan ? <MigrationPlanView plan={plan} /> : null}
        {plan && !plan.executed && exec.data ? <p className="field-error">The run was not moved: the plan is no longer compatible.</p> : null}
        <DialogActions
          back="Cancel"
          onBack={onClose}
          act={exec.isPending ? 'Migrating…' : 'Execute migration'}
          onAct={() => request && exec.mutate(request)}
          disabled={!executable}
        />
        {why ? <p className="muted small migrate-why">{why}.</p> : null}
      </form>
    </Dialog>
  );
}
