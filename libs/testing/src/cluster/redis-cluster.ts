/**
 * A throwaway Redis Cluster on loopback for tests: `masters` redis-server processes in cluster
 * mode (no persistence, cluster state in a temp dir), joined by `redis-cli --cluster create`
 * with no replicas, ready once every node reports `cluster_state:ok`. Needs redis-server and
 * redis-cli ≥ 7 (sharded pub/sub) on the PATH.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, redisAnswers } from './infra';

/** A Redis Cluster started by {@link startRedisCluster}. */
export interface RedisClusterServer {
  /** the masters' addresses */
  nodes: { host: string; port: number }[];
  /** `REDIS_CLUSTER_NODES` for the services: `127.0.0.1:p1,127.0.0.1:p2,…` */
  nodesEnv: string;
  /** `REDIS_URL` of the first node (on a cluster the services read only credentials and TLS from it) */
  url: string;
  /** kills every node and removes the cluster's temp dir */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** masters (hash slots split evenly among them) @default 3 */
  masters?: number;
  /** how long the nodes may take to agree on `cluster_state:ok`, ms @default 20000 */
  readyTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function redisCli(port: number, args: string[]): { status: number | null; out: string } {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function stopNode(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

/** Starts the nodes, creates the cluster and waits until it serves every slot. */
export async function startRedisCluster(o: RedisClusterOptions = {}): Promise<RedisClusterServer> {
  const masters = o.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 3) throw new Error('a Redis Cluster needs at least 3 masters');
  const dir = mkdtempSync(join(tmpdir(), 'flowline-redis-cluster-'));
  const procs: ChildProcess[] = [];
  const nodes: { host: string; port: number }[] = [];
  const stop = async () => {
    await Promise.all(procs.map(stopNode));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // A port found free may be taken again before redis-server binds it (another test process,
    // or the OS handing the same ephemeral port out twice): a node that exits before it answers
    // is started again on fresh ports, up to `attempts` times.
    const taken = new Set<number>();
    const distinctPort = async () => {
      for (;;) {
        const p = await freePort();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    const attempts = 5;
    for (let i = 0; i < masters; i++) {
      let started = false;
      for (let attempt = 1; attempt <= attempts && !started; attempt++) {
        // the cluster bus port is chosen too: the default (port + 10000) may be taken or past 65535
        const [port, busPort] = [await distinctPort(), await distinctPort()];
        const proc = spawn(
          'redis-server',
          [
            '--port', String(port),
            '--cluster-port', String(busPort),
            '--bind', '127.0.0.1',
            '--cluster-enabled', 'yes',
            '--cluster-config-file', join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout', '5000',
            '--save', '',
            '--appendonly', 'no',
            '--dir', dir,
          ],
          { stdio: 'ignore' },
        );
        procs.push(proc);
        for (let poll = 0; poll < 200 && !started && proc.exitCode === null && proc.signalCode === null; poll++) {
          started = await redisAnswers(`redis://127.0.0.1:${port}`);
          if (!started) await sleep(50);
        }
        if (started) nodes.push({ host: '127.0.0.1', port });
        else {
          await stopNode(proc);
          if (attempt === attempts) throw new Error(`redis-server did not answer on any of ${attempts} port pairs (last ${port}/${busPort})`);
        }
      }
    }
    const created = redisCli(nodes[0]!.port, ['--cluster', 'create', ...nodes.map((n) => `${n.host}:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.out}`);
    const until = Date.now() + (o.readyTimeoutMs ?? 20_000);
    for (;;) {
      const ok = nodes.every((n) => /cluster_state:ok/.test(redisCli(n.port, ['cluster', 'info']).out));
      if (ok) break;
      if (Date.now() > until) throw new Error('the Redis Cluster did not reach cluster_state:ok');
      await sleep(200);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes,
    nodesEnv: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    url: `redis://${nodes[0]!.host}:${nodes[0]!.port}`,
    stop,
  };
}
