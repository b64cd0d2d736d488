/**
 * The web console (`services/console`'s built assets) served same-origin at `/console`:
 * hashed files under `/console/assets/` are immutable, every other `/console/…` path that
 * names no file answers the app's `index.html` (its router reads the URL), and both are
 * sent precompressed (brotli or gzip) when the build wrote `.br` / `.gz` beside them (the app's
 * page itself, when the API says in it whether keys are checked, is sent as that text).
 * Without a build, `/console` answers 503 `ConsoleNotBuilt` saying how to build it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from './context';
import { ApiError, NotFoundError } from './errors';

/** The URL prefix of the console. */
export const CONSOLE_PATH = '/console';

/** 503: the console's assets were not built. */
export class ConsoleNotBuiltError extends ApiError {
  constructor(dir: string) {
    super(503, 'ConsoleNotBuilt', `the console is not built (no index.html in ${dir}): run \`npm run build -w @flowline/console\``);
  }
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface ConsoleOptions {
  /**
   * Whether the API checks keys. Said in the app's HTML (`<meta name="flowline-auth">`), so a
   * console with no key yet asks for one at once instead of asking whoami and being refused;
   * unset, the HTML is sent as built.
   */
  authRequired?: boolean;
  /**
   * With single sign-on: whether the request carries a live sign-in session. The page then says
   * `session`, and the console asks whoami (its cookie answers) instead of showing the sign-in form.
   */
  signedIn?: (c: Context<AppEnv>) => Promise<boolean>;
}

/** The app's `index.html` with the auth meta of a request; the file is re-read when the build changes it. */
function appHtml(distDir: string, o: ConsoleOptions): (c: Context<AppEnv>) => Promise<string> {
  let cached: { mtimeMs: number; head: string; tail: string } | null = null;
  return async (c) => {
    const file = join(distDir, 'index.html');
    const { mtimeMs } = statSync(file);
    if (cached?.mtimeMs !== mtimeMs) {
      const built = readFileSync(file, 'utf8');
      const cut = built.includes('</head>') ? built.indexOf('</head>') : 0;
      cached = { mtimeMs, head: built.slice(0, cut), tail: built.slice(cut) };
    }
    const state = !o.authRequired ? 'none' : o.signedIn && (await o.signedIn(c)) ? 'session' : 'required';
    return `${cached.head}<meta name="flowline-auth" content="${state}" />${cached.tail}`;
  };
}

/** Registers `GET /console` and `GET /console/*` serving `distDir`. */
export function registerConsole(app: OpenAPIHono<AppEnv>, distDir: string, o: ConsoleOptions = {}): void {
  const built = () => existsSync(join(distDir, 'index.html'));
  const strip = (path: string) => path.slice(CONSOLE_PATH.length) || '/';
  const html = o.authRequired === undefined ? null : appHtml(distDir, o);

  app.get(CONSOLE_PATH, (c) => c.redirect(`${CONSOLE_PATH}/`, 308));
  app.use(
    `${CONSOLE_PATH}/*`,
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        // the live channel's websocket is same-origin ('self' covers ws: of this host); React Flow positions nodes with inline styles
        connectSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        frameAncestors: ["'none'"],
      },
      crossOriginEmbedderPolicy: false,
    }),
  );
  app.use(`${CONSOLE_PATH}/*`, async (c, next) => {
    if (!built()) throw new ConsoleNotBuiltError(distDir);
    await next();
  });
  // cache policy on what was found: hashed assets forever, everything else revalidated
  app.use(`${CONSOLE_PATH}/*`, async (c, next) => {
    await next();
    if (c.res.status === 200 || c.res.status === 206) {
      c.res.headers.set('Cache-Control', c.req.path.startsWith(`${CONSOLE_PATH}/assets/`) ? IMMUTABLE : 'no-cache');
    }
  });
  app.get(`${CONSOLE_PATH}/assets/*`, serveStatic({ root: distDir, precompressed: true, rewriteRequestPath: strip }), () => {
    throw new NotFoundError('console asset');
  });
  if (html) {
    // the app's page carries the auth meta: never the file as built
    app.get(`${CONSOLE_PATH}/*`, async (c, next) => {
      const path = strip(c.req.path);
      if (path === '/' || path === '/index.html') return c.html(await html(c));
      await next();
    });
  }
  app.get(
    `${CONSOLE_PATH}/*`,
    serveStatic({ root: distDir, precompressed: true, rewriteRequestPath: strip }),
    // any other path is a view of the single-page app
    html ? async (c) => c.html(await html(c)) : serveStatic({ root: distDir, path: 'index.html', precompressed: true }),
  );
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: `${CONSOLE_PATH}/`,
    tags: ['ops'],
    security: [],
    operationId: 'getConsole',
    summary: 'The web console (HTML)',
    description: 'The web console: every path under /console/ is one of its views. It signs in with an API key.',
    responses: {
      200: { description: 'the console', content: { 'text/html': { schema: { type: 'string' } } } },
      503: { description: 'ConsoleNotBuilt: the console assets were not built', content: { 'application/json': { schema: { type: 'object' } } } },
    },
  });
}
