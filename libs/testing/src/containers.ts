import { existsSync } from 'node:fs';
import pg from 'pg';

/** The local Postgres default (trust auth). */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

let resolved: Promise<string> | undefined;

/**
 * The admin connection string tests use: `DATABASE_URL` when set; else the local default
 * when it answers; else, only when a Docker engine socket exists, a throwaway Postgres 15
 * container (testcontainers); else the local default (tests then fail loudly on connect).
 */
export function resolveDatabaseUrl(): Promise<string> {
  resolved ??= resolve();
  return resolved;
}

async function resolve(): Promise<string> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return fromEnv;
  if ((await answers(DEFAULT_DATABASE_URL)) || !existsSync('/var/run/docker.sock'))
    return DEFAULT_DATABASE_URL;
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('postgres:15')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  return `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
}

async function answers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}
