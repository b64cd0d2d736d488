import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aliasTargetsOf, childVersion, pickTarget, resolveAlias, type AliasTarget } from './alias';

describe('aliasTargetsOf', () => {
  it('reads one version as all starts, and weighted targets as given', () => {
    expect(aliasTargetsOf({ version: 6 })).toEqual({ ok: true, targets: [{ version: 6, percent: 100 }] });
    expect(aliasTargetsOf({ targets: [{ version: 7, percent: 10 }] })).toEqual({
      ok: true,
      targets: [{ version: 7, percent: 10 }],
    });
  });

  it('refuses keyed: no target, a bad version or percent, a version twice, percents past 100', () => {
    const bad = (body: Parameters<typeof aliasTargetsOf>[0]) => {
      const r = aliasTargetsOf(body);
      return r.ok ? [] : r.issues.map((i) => i.key);
    };
    expect(bad({ targets: [] })).toEqual(['targets']);
    expect(bad({ version: 0 })).toEqual(['targets.0.version']);
    expect(bad({ targets: [{ version: 2, percent: 0 }] })).toEqual(['targets.0.percent']);
    expect(
      bad({
        targets: [
          { version: 2, percent: 50 },
          { version: 2, percent: 10 },
        ],
      }),
    ).toEqual(['targets.1.version']);
    expect(
      bad({
        targets: [
          { version: 2, percent: 60 },
          { version: 3, percent: 50 },
        ],
      }),
    ).toEqual(['targets']);
  });
});

describe('resolveAlias', () => {
  const aliases = new Map<string, AliasTarget[]>([
    ['current', [{ version: 6, percent: 100 }]],
    ['canary', [{ version: 7, percent: 10 }]],
  ]);

  it('sends a start without an alias to current, else to the latest version', () => {
    expect(resolveAlias(aliases, 'current', 9, [42, 0])).toBe(6);
    expect(resolveAlias(new Map(), 'current', 9, [42, 0])).toBe(9);
  });

  it('places a canary share of starts on its version and the rest on current', () => {
    expect(resolveAlias(aliases, 'canary', 9, [9.99, 50])).toBe(7);
    expect(resolveAlias(aliases, 'canary', 9, [10, 50])).toBe(6);
    expect(resolveAlias(aliases, 'nope', 9, [0, 0])).toBeNull();
  });

  it('gives each target exactly its percent of the roll space', () => {
    fc.assert(
      // weights summing to at most 100, as alias validation allows (a larger sum is refused before it is ever rolled)
      fc.property(
        fc
          .array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 })
          .filter((ps) => ps.reduce((a, b) => a + b, 0) <= 100),
        (percents) => {
          const targets = percents.map((percent, i) => ({ version: i + 1, percent }));
          const counts = new Map<number | null, number>();
          for (let roll = 0; roll < 100; roll++)
            counts.set(pickTarget(targets, roll), (counts.get(pickTarget(targets, roll)) ?? 0) + 1);
          targets.forEach((t) => expect(counts.get(t.version)).toBe(t.percent));
          expect(counts.get(null) ?? 0).toBe(100 - percents.reduce((a, b) => a + b, 0));
        },
      ),
    );
  });
});

describe('childVersion', () => {
  const child = new Map<string, AliasTarget[]>([
    ['current', [{ version: 3, percent: 100 }]],
    ['canary', [{ version: 4, percent: 100 }]],
  ]);

  it("uses the node's pin, else the parent's alias when the child has it, else current", () => {
    expect(childVersion({ version: 2 }, 'canary', child, 5, [0, 0])).toEqual({
      ok: true,
      version: 2,
      alias: null,
    });
    expect(childVersion({ alias: 'current' }, 'canary', child, 5, [0, 0])).toEqual({
      ok: true,
      version: 3,
      alias: 'current',
    });
    expect(childVersion({}, 'canary', child, 5, [0, 0])).toEqual({ ok: true, version: 4, alias: 'canary' });
    expect(childVersion({}, 'beta', child, 5, [0, 0])).toEqual({ ok: true, version: 3, alias: 'current' });
    expect(childVersion({}, null, child, 5, [0, 0])).toEqual({ ok: true, version: 3, alias: 'current' });
    expect(childVersion({}, null, new Map(), 5, [0, 0])).toEqual({ ok: true, version: 5, alias: 'current' });
    expect(childVersion({ alias: 'beta' }, null, child, 5, [0, 0])).toEqual({ ok: false, alias: 'beta' });
  });

  it('a pinned version always wins; without a pin the child follows the parent exactly when the child has that alias', () => {
    const name = fc.constantFrom('current', 'canary', 'beta', 'gamma');
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        fc.option(name, { nil: null }),
        fc.uniqueArray(name, { maxLength: 4 }),
        fc.integer({ min: 1, max: 9 }),
        fc.tuple(
          fc.double({ min: 0, max: 99.99, noNaN: true }),
          fc.double({ min: 0, max: 99.99, noNaN: true }),
        ),
        (pinned, parent, names, latest, rolls) => {
          const aliases = new Map(names.map((n, i) => [n, [{ version: i + 1, percent: 100 }]]));
          const got = childVersion(
            pinned === undefined ? {} : { version: pinned },
            parent,
            aliases,
            latest,
            rolls,
          );
          const used = parent !== null && aliases.has(parent) ? parent : 'current';
          const want =
            pinned !== undefined
              ? { ok: true, version: pinned, alias: null }
              : { ok: true, version: resolveAlias(aliases, used, latest, rolls), alias: used };
          expect(got).toEqual(want);
        },
      ),
    );
  });
});
