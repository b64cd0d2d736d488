/**
 * The lane logger's child bound to `bindings`, made on first use: a pino child serializes its
 * bindings (and sets up redaction) when it is made, work a job whose call never logs need not
 * pay. Every member read reaches the real child.
 */
export function lazyChild<L extends object>(logger: { child(bindings: Record<string, unknown>): L }, bindings: Record<string, unknown>): L {
  let real: L | null = null;
  const target = () => (real ??= logger.child(bindings));
  return new Proxy({} as L, {
    get(_, prop) {
      const t = target();
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
    set: (_, prop, value) => Reflect.set(target(), prop, value),
    has: (_, prop) => Reflect.has(target(), prop),
  });
}
