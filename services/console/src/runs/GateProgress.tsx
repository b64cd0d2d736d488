/**
 * A gate's approval progress, said generically: an approval policy (quorums on a Pause) may put
 * a `quorums` (or `progress`) list in the gate's data — the blocker's details, the node's
 * answer, or under its `approval` / `gate` member. Each entry reads `name: have of need` when it
 * names numbers the usual way, else its members as JSON; nothing is shown when there is no list.
 * The console builds no policy UI: it shows what the API says.
 */

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The progress list of a gate's data, or null. */
export function gateProgressOf(data: unknown): unknown[] | null {
  if (!isObj(data)) return null;
  for (const holder of [data, data.approval, data.gate]) {
    if (!isObj(holder)) continue;
    for (const member of ['quorums', 'progress'] as const) {
      const list = holder[member];
      if (Array.isArray(list) && list.length > 0) return list;
    }
  }
  return null;
}

/** One entry of the list: `name: have of need`, else its members as JSON. */
export function quorumText(q: unknown): string {
  if (!isObj(q)) return String(q);
  const name = typeof q.name === 'string' ? q.name : 'quorum';
  const have = [q.approvals, q.approved, q.count, q.have].find((v) => typeof v === 'number');
  const need = [q.min, q.need, q.required].find((v) => typeof v === 'number');
  return typeof have === 'number' && typeof need === 'number' ? `${name}: ${have} of ${need}` : `${name}: ${JSON.stringify(q)}`;
}

export function GateProgress({ gate }: { gate: unknown }) {
  const list = gateProgressOf(gate);
  if (!list) return null;
  return (
    <ul className="quorums" aria-label="Approval progress">
      {list.map((q, i) => (
        <li key={i} className="chip">
          {quorumText(q)}
        </li>
      ))}
    </ul>
  );
}
