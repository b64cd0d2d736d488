/**
 * infra/k8s: every overlay renders with `kubectl kustomize` and each rendered object
 * validates against the Kubernetes JSON schemas that kubernetes-models ships (KEDA's from
 * @kubernetes-models/keda); the objects carry what operating Flowline needs (probes,
 * resources, PDBs, drain-matched grace periods, compiled entry points, KEDA on the
 * Prometheus lane metrics, HPA on CPU).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const OVERLAYS = ['dev', 'prod'] as const;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}

/** apiVersion/kind → the model whose validate() checks the object against its schema. */
const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

function validate(o: K8sObject): void {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no schema for ${o.apiVersion} ${o.kind}: add its model to MODELS`);
  new Model(o as never).validate();
}

function render(overlay: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', `infra/k8s/overlays/${overlay}`], { cwd: rootDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(text).map((d) => d.toJS() as K8sObject);
}

/** Each service's shutdown deadline (installShutdown graceMs in its main.ts), ms. */
function shutdownDeadlineMs(command: string[], env: Map<string, string>): number {
  const main = command.join(' ');
  if (main.includes('services/api/')) return 10_000;
  if (main.includes('services/dispatcher/')) return 15_000;
  // workers: SHUTDOWN_GRACE_MS (default 10 s) + the 10 s deadline their main.ts adds
  return Number(env.get('SHUTDOWN_GRACE_MS') ?? 10_000) + 10_000;
}

describe.each(OVERLAYS)('infra/k8s overlay %s', (overlay) => {
  const objects = render(overlay);
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);

  it('renders objects that each validate against their Kubernetes schema', () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const o of objects) expect(() => validate(o), `${o.kind}/${o.metadata.name}`).not.toThrow();
  });

  it('has Prometheus scrape every pod on the port that serves its /metrics', () => {
    for (const d of byKind('Deployment')) {
      const t = (d.spec as { template: { metadata: { annotations?: Record<string, string> }; spec: { containers: { ports?: { containerPort: number }[] }[] } } }).template;
      const a = t.metadata.annotations ?? {};
      expect(a['prometheus.io/scrape'], d.metadata.name).toBe('true');
      expect(a['prometheus.io/path'], d.metadata.name).toBe('/metrics');
      expect(t.spec.containers[0]!.ports?.map((p) => String(p.containerPort)), d.metadata.name).toContain(a['prometheus.io/port']);
    }
  });

  it('runs the compiled entry point of every service, each with probes, resources, a PDB and a grace period covering its drain', () => {
    const deployments = byKind('Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['flowline-api', 'flowline-dispatcher', 'flowline-worker-llm', 'flowline-worker-tool']);
    const pdbs = byKind('PodDisruptionBudget').map((p) => p.metadata.name);
    for (const d of deployments) {
      const pod = (d.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
        terminationGracePeriodSeconds: number;
        containers: { command: string[]; env?: { name: string; value?: string }[]; resources: { requests: object; limits: object }; readinessProbe: { httpGet: { path: string } }; livenessProbe: { httpGet: { path: string } } }[];
      };
      const c = pod.containers[0]!;
      expect(c.command.slice(0, 1), d.metadata.name).toEqual(['node']);
      expect(c.command[1], d.metadata.name).toMatch(/^services\/[a-z-]+\/dist\/main\.js$/);
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      // every process serves /livez: the API on its PORT, dispatchers and workers on their ops port
      expect(c.livenessProbe.httpGet.path).toBe('/livez');
      expect(c.resources.requests).toBeTruthy();
      expect(c.resources.limits).toBeTruthy();
      expect(pdbs, d.metadata.name).toContain(d.metadata.name);
      const env = new Map((c.env ?? []).map((e) => [e.name, e.value ?? '']));
      expect(pod.terminationGracePeriodSeconds * 1000, d.metadata.name).toBeGreaterThanOrEqual(shutdownDeadlineMs(c.command, env) + 5_000);
    }
  });

  it('migrates once in a Job, scales the API on CPU and each worker pool with KEDA on the lane depth and age metrics', () => {
    const [job] = byKind('Job') as unknown as { spec: { template: { spec: { containers: { command: string[] }[] } } } }[];
    expect(job!.spec.template.spec.containers[0]!.command).toEqual(['node', 'services/api/dist/migrate-main.js']);
    const [hpa] = byKind('HorizontalPodAutoscaler') as unknown as { spec: { scaleTargetRef: { name: string }; metrics: { resource: { name: string } }[] } }[];
    expect(hpa!.spec.scaleTargetRef.name).toBe('flowline-api');
    expect(hpa!.spec.metrics[0]!.resource.name).toBe('cpu');
    const scaled = byKind('ScaledObject') as unknown as { spec: { scaleTargetRef: { name: string }; triggers: { type: string; metadata: { query: string } }[] } }[];
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual(['flowline-worker-llm', 'flowline-worker-tool']);
    for (const s of scaled) {
      const lane = s.spec.scaleTargetRef.name.replace('flowline-worker-', '');
      expect(s.spec.triggers.map((t) => t.type)).toEqual(['prometheus', 'prometheus']);
      expect(s.spec.triggers.map((t) => t.metadata.query)).toEqual([
        `max(flowline_lane_queue_depth{lane="${lane}"})`,
        `max(flowline_lane_oldest_wait_seconds{lane="${lane}"})`,
      ]);
    }
  });
});

it('the schema check rejects a malformed object (the validation can fail)', () => {
  const [deployment] = render('dev').filter((o) => o.kind === 'Deployment');
  const broken = structuredClone(deployment!) as unknown as { spec: { template: { spec: { terminationGracePeriodSeconds: unknown } } } };
  broken.spec.template.spec.terminationGracePeriodSeconds = 'forty';
  expect(() => validate(broken as unknown as K8sObject)).toThrow(/terminationGracePeriodSeconds/);
});
