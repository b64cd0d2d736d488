/**
 * The one template engine of Flowline: LiquidJS configured as a sandbox. A template reads
 * the JSON it is given and nothing else:
 * - strict: an undefined variable or filter is an error (`default` and `if` may still test a
 *   missing value), so a typo fails the node instead of sending an empty string to a model;
 * - own properties only: `constructor`, `__proto__` and the other prototype members read as
 *   undefined, so a template cannot reach code;
 * - no files: `include`, `render` and `layout` are refused at parse, and the engine is given a
 *   file system that holds nothing;
 * - no clock, no randomness: `sample` is removed and the date filters refuse `now`/`today`,
 *   so rendering the same template over the same document gives the same text everywhere
 *   (the planner renders End templates inside a tick).
 * Rendering is synchronous; its bounds live in `render.ts`.
 */
import { Liquid, Tag, type FilterImplOptions, type FS, type Liquid as LiquidEngine, type TagToken, type TopLevelToken } from 'liquidjs';

/** The roots a template may read: the members of the node's input document, plus the run state. */
export const TEMPLATE_ROOTS = ['input', 'state', 'upstream', 'run'] as const;
export type TemplateRoot = (typeof TEMPLATE_ROOTS)[number];

/** Tags that would read other templates from files. */
const FILE_TAGS = ['include', 'render', 'layout'] as const;

/** Filters that read the clock when given `now` or `today`. */
const DATE_FILTERS = ['date', 'date_to_xmlschema', 'date_to_rfc822', 'date_to_string', 'date_to_long_string'] as const;

/** A file system with no files: a partial that slipped past the tag ban finds nothing. */
const NO_FILES: FS = {
  exists: () => Promise.resolve(false),
  existsSync: () => false,
  readFile: () => Promise.reject(new Error('templates read no files')),
  readFileSync: () => {
    throw new Error('templates read no files');
  },
  resolve: (_dir: string, file: string) => file,
};

function refusedTag(name: string) {
  return class extends Tag {
    constructor(token: TagToken, remain: TopLevelToken[], liquid: LiquidEngine) {
      super(token, remain, liquid);
      throw new Error(`the ${name} tag is not available: a template reads no other template`);
    }
    render(): void {}
  };
}

function clockFreeDate(name: string, builtin: FilterImplOptions): FilterImplOptions {
  const handler = typeof builtin === 'function' ? builtin : builtin.handler;
  return function (this: unknown, value: unknown, ...args: unknown[]) {
    if (typeof value === 'string' && /^\s*(now|today)\s*$/i.test(value)) {
      throw new Error(`the ${name} filter reads no clock: give it a date from the document`);
    }
    return handler.call(this as never, value, ...args);
  };
}

function createEngine(): Liquid {
  const engine = new Liquid({
    strictVariables: true,
    strictFilters: true,
    lenientIf: true,
    ownPropertyOnly: true,
    jsTruthy: false,
    fs: NO_FILES,
    relativeReference: false,
    cache: false,
    // dates format the same on every host
    timezoneOffset: 0,
    locale: 'en-US',
  });
  for (const tag of FILE_TAGS) engine.registerTag(tag, refusedTag(tag));
  engine.unregisterFilter('sample');
  for (const name of DATE_FILTERS) {
    const builtin = engine.filters[name];
    if (builtin) engine.registerFilter(name, clockFreeDate(name, builtin));
  }
  return engine;
}

/** The shared engine: it holds configuration only, no per-render state. */
export const templateEngine: Liquid = createEngine();

/**
 * True when `text` holds template syntax (`{{` or `{%`). Text without it is never handed to
 * the engine, so a prompt without placeholders is sent byte for byte as written.
 */
export function hasTemplateSyntax(text: string): boolean {
  return text.includes('{{') || text.includes('{%');
}
