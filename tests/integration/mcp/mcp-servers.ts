/**
 * Real MCP servers from the npm registry, started by the tests: `@modelcontextprotocol/
 * server-everything` over streamable HTTP on a free port, and the stdio configuration of
 * `@modelcontextprotocol/server-memory`. A recording proxy sits in front of the HTTP server
 * when a test must see what reached it (a `notifications/cancelled`).
 */
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { spawnService, type ServiceProcess } from '@flowline/testing';

const require = createRequire(import.meta.url);

/** The entry script of an installed server package (its `bin`). */
export function serverEntry(pkg: '@modelcontextprotocol/server-everything' | '@modelcontextprotocol/server-memory'): string {
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface EverythingServer {
  url: string;
  process: ServiceProcess;
  stop(): Promise<void>;
}

/**
 * Starts server-everything on a free port (`PORT`): in streamable HTTP mode
 * (`index.js streamableHttp`, endpoint `/mcp`), or in the older HTTP+SSE mode (`index.js sse`,
 * endpoint `/sse`).
 */
export async function startEverything(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<EverythingServer> {
  const port = await freePort();
  const proc = await spawnService({
    cwd: process.cwd(),
    env: { PORT: String(port) },
    args: [serverEntry('@modelcontextprotocol/server-everything'), mode],
    readyText: mode === 'sse' ? `Server is running on port ${port}` : `listening on port ${port}`,
  });
  return {
    url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`,
    process: proc,
    stop: async () => {
      proc.child.kill('SIGTERM');
      await proc.exited;
    },
  };
}

export interface RecordingProxy {
  url: string;
  /** the JSON-RPC messages POSTed through the proxy, parsed */
  posted: Array<{ method?: string; id?: unknown; params?: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** An HTTP proxy to `target` (an origin) that records every POSTed JSON-RPC message. */
export async function recordingProxy(targetUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetUrl);
  const posted: RecordingProxy['posted'] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && body.length > 0) {
        const parsed: unknown = JSON.parse(body.toString('utf8'));
        for (const m of Array.isArray(parsed) ? parsed : [parsed]) posted.push(m as RecordingProxy['posted'][number]);
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    posted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
