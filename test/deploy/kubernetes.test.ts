// deploy/kubernetes rendered by the real kustomize (`kubectl kustomize`; .ci/run installs Debian's kubectl where
// none is installed: the kustomizations are written for its kustomize 2 as for kustomize 5), every object held to
// the Kubernetes schemas (kubernetes-models, and @kubernetes-models/prometheus-operator for the ServiceMonitor),
// and the points an operator gets wrong read off the rendered objects: probes, the hardened security context,
// the drain, the PodDisruptionBudget, the NetworkPolicies, Secrets and ConfigMaps, the single IBKR gateway.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/core/config.js';
import { EnvSchema, SECRET, VARIABLES } from '../../src/core/config-schema.js';
import { SHUTDOWN_DRAIN_MS } from '../../src/process/shutdown.js';
import { tempDir, testConfig } from '../helpers/config.js';

const run = promisify(execFile);
const KUBERNETES = join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes');
const NAME = 'market-data-proxy';

// Rendered objects, read field by field below.
type K8sObject = Record<string, any> & { apiVersion: string; kind: string; metadata: Record<string, any> & { name: string } };

const rendered = new Map<string, Promise<K8sObject[]>>();

/** `kubectl kustomize` of a folder under deploy/kubernetes, as objects (rendered once per folder). */
function render(dir: string): Promise<K8sObject[]> {
  let objects = rendered.get(dir);
  if (objects === undefined) {
    objects = kustomize(dir);
    rendered.set(dir, objects);
  }
  return objects.then((list) => structuredClone(list));
}

async function kustomize(dir: string): Promise<K8sObject[]> {
  let stdout: string;
  try {
    ({ stdout } = await run('kubectl', ['kustomize', join(KUBERNETES, dir)], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT')
      throw new Error('kubectl is not installed (apt-get install kubernetes-client; .ci/run does)');
    throw error;
  }
  return parseAllDocuments(stdout).map((document) => document.toJS() as K8sObject);
}

function file(name: string): K8sObject {
  return parseAllDocuments(readFileSync(join(KUBERNETES, name), 'utf8'))[0]!.toJS() as K8sObject;
}

/** The schema of each kind the manifests hold, by apiVersion and kind (each imported alone: the whole package loads slowly). */
const MODELS: Record<string, new (object: never) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'v1 ConfigMap': ConfigMap,
  'v1 Service': Service,
  'v1 ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
};

function validate(object: K8sObject): void {
  const Model = MODELS[`${object.apiVersion} ${object.kind}`];
  assert.ok(Model !== undefined, `no schema here for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

const one = (objects: K8sObject[], kind: string, name = NAME): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found;
};
const container = (deployment: K8sObject, name = NAME) =>
  deployment.spec.template.spec.containers.find((c: { name: string }) => c.name === name);

test('kubectl kustomize renders both overlays and the IBKR gateway; every object, and the ServiceMonitor, validates against the Kubernetes schemas', async () => {
  for (const dir of ['overlays/single', 'overlays/replicated', 'ibkr-gateway']) {
    const objects = await render(dir);
    assert.ok(objects.length >= 3, dir);
    for (const object of objects) {
      assert.doesNotThrow(() => validate(object), `${dir}: ${object.kind} ${object.metadata.name}`);
    }
  }
  const monitor = file('service-monitor.yaml');
  validate(monitor);
  const service = one(await render('overlays/single'), 'Service');
  assert.deepEqual(monitor.spec.selector.matchLabels, service.metadata.labels, 'the ServiceMonitor selects the Service');
  assert.ok(
    service.spec.ports.some((p: { name: string }) => p.name === monitor.spec.endpoints[0].port),
    'its port is one of the Service',
  );
  assert.deepEqual(monitor.spec.endpoints[0].authorization.credentials, { name: 'market-data-proxy-keys', key: 'METRICS_TOKEN' });
});

test('probes: startup and liveness on /api/system/live, readiness on /api/system/ready, both paths of the OpenAPI document', async (t) => {
  const deployment = one(await render('overlays/single'), 'Deployment');
  const api = container(deployment);
  const ports = new Set(api.ports.map((p: { name: string }) => p.name));
  assert.equal(api.startupProbe.httpGet.path, '/api/system/live');
  assert.equal(api.livenessProbe.httpGet.path, '/api/system/live');
  assert.equal(api.readinessProbe.httpGet.path, '/api/system/ready');
  for (const probe of [api.startupProbe, api.livenessProbe, api.readinessProbe])
    assert.ok(ports.has(probe.httpGet.port), probe.httpGet.port);

  // The route reads nothing (test/services/system-status.test.ts: 200 with the store lost too).
  const config = testConfig(t, { BROKER: 'none', METRICS_PORT: 'off' });
  const app = await buildApp(config);
  t.after(() => app.close());
  await app.ready();
  const paths = (app.swagger() as { paths: Record<string, unknown> }).paths;
  for (const probe of [api.startupProbe, api.livenessProbe, api.readinessProbe]) assert.ok(probe.httpGet.path in paths, probe.httpGet.path);
  assert.equal((await app.inject(api.livenessProbe.httpGet.path)).statusCode, 200);
});

test('the pods run hardened: non-root as the image user, read-only root with STATE_DIR and /tmp on emptyDir, no capability, RuntimeDefault seccomp, no token, no service links', async () => {
  const dockerfile = readFileSync(join(KUBERNETES, '..', '..', 'Dockerfile'), 'utf8');
  const stateDir = /STATE_DIR=(\S+)/.exec(dockerfile)?.[1];
  for (const dir of ['overlays/single', 'overlays/replicated']) {
    const pod = one(await render(dir), 'Deployment').spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true, dir);
    assert.equal(pod.securityContext.runAsUser, 1000, "the image's node user");
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.enableServiceLinks, false, 'no MARKET_DATA_PROXY_PORT-style variables beside the settings');
    const api = pod.containers[0];
    assert.deepEqual(api.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const emptyDirs = new Set(
      pod.volumes.filter((v: { emptyDir?: unknown }) => v.emptyDir !== undefined).map((v: { name: string }) => v.name),
    );
    const mounted = api.volumeMounts.filter((m: { name: string }) => emptyDirs.has(m.name)).map((m: { mountPath: string }) => m.mountPath);
    assert.deepEqual(mounted.sort(), [stateDir, '/tmp'].sort());
  }
});

test("the drain fits: terminationGracePeriodSeconds covers preStop's sleep and the service's drain on SIGTERM", async () => {
  const pod = one(await render('overlays/single'), 'Deployment').spec.template.spec;
  const [command, seconds] = pod.containers[0].lifecycle.preStop.exec.command;
  assert.equal(command, 'sleep');
  assert.ok(Number(seconds) >= 3, 'long enough for the endpoints to drop the pod');
  assert.ok(
    pod.terminationGracePeriodSeconds >= Number(seconds) + SHUTDOWN_DRAIN_MS / 1000 + 5,
    `${pod.terminationGracePeriodSeconds} s < ${seconds} s + ${SHUTDOWN_DRAIN_MS / 1000} s + 5 s`,
  );
});

test('replicated: replicas on Redis from a Secret, counted by an HPA from three alone, a PDB of maxUnavailable 1; no PDB anywhere uses minAvailable', async () => {
  const replicated = await render('overlays/replicated');
  const deployment = one(replicated, 'Deployment');
  // A count in the manifest would be set back by every apply, whatever the HPA had scaled to.
  assert.equal(deployment.spec.replicas, undefined, 'the HPA owns the count');
  const secrets = container(deployment)
    .envFrom.filter((e: { secretRef?: unknown }) => e.secretRef)
    .map((e: { secretRef: { name: string } }) => e.secretRef.name);
  assert.deepEqual(secrets, ['market-data-proxy-keys', 'market-data-proxy-redis']);
  const hpa = one(replicated, 'HorizontalPodAutoscaler');
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: NAME });
  assert.ok(hpa.spec.minReplicas >= 3);
  const pdb = one(replicated, 'PodDisruptionBudget');
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.deepEqual(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels);
  const single = await render('overlays/single');
  assert.equal(one(single, 'Deployment').spec.replicas, 1);
  for (const pdbs of [replicated, single].map((objects) => objects.filter((o) => o.kind === 'PodDisruptionBudget'))) {
    for (const budget of pdbs) assert.equal(budget.spec.minAvailable, undefined, 'minAvailable blocks drains');
  }
});

test('NetworkPolicies: in, the API port from the ingress namespace and metrics from monitoring; out, DNS, HTTPS, the IBKR gateway and (replicated) Redis only', async () => {
  const portsOf = (rules: { ports?: { protocol: string; port: string | number }[] }[]) =>
    rules.flatMap((rule) => (rule.ports ?? []).map((p) => `${p.protocol}/${p.port}`)).sort();
  for (const dir of ['overlays/single', 'overlays/replicated']) {
    const objects = await render(dir);
    const api = container(one(objects, 'Deployment'));
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    for (const policy of policies) assert.deepEqual(policy.spec.podSelector.matchLabels, { 'app.kubernetes.io/name': NAME });
    const main = one(objects, 'NetworkPolicy');
    assert.deepEqual(main.spec.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(
      main.spec.ingress.map((rule: { from: { namespaceSelector: { matchLabels: Record<string, string> } }[] }) => [
        rule.from[0]!.namespaceSelector.matchLabels['kubernetes.io/metadata.name'],
        portsOf([rule as never]),
      ]),
      [
        ['ingress-nginx', ['TCP/http']],
        ['monitoring', ['TCP/metrics']],
      ],
    );
    assert.deepEqual(api.ports.map((p: { name: string }) => p.name).sort(), ['http', 'metrics'], 'named ports the policy admits');
    const egress = policies.flatMap((policy) => policy.spec.egress ?? []);
    for (const rule of egress) assert.ok((rule.ports ?? []).length > 0, 'no rule opens every port');
    const expected = ['TCP/443', 'TCP/5000', 'TCP/53', 'UDP/53', ...(dir.endsWith('replicated') ? ['TCP/26379', 'TCP/6379'] : [])].sort();
    assert.deepEqual(portsOf(egress), expected, dir);
    const gateway = egress.find((rule: { ports: { port: number }[] }) => rule.ports.some((p) => p.port === 5000));
    assert.deepEqual(gateway.to, [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ibkr-gateway' } } }]);
  }
});

test('Secrets hold the keys: no ConfigMap names a secret setting, the pods read the keys from a Secret, and nothing ships a Secret with values', async (t) => {
  const secret = (name: string) => (EnvSchema.properties as Record<string, Record<string, unknown>>)[name]?.[SECRET] === true;
  for (const dir of ['overlays/single', 'overlays/replicated', 'ibkr-gateway']) {
    const objects = await render(dir);
    assert.deepEqual(
      objects.filter((o) => o.kind === 'Secret'),
      [],
      `${dir}: Secrets are the operator's to create`,
    );
    for (const map of objects.filter((o) => o.kind === 'ConfigMap')) {
      const keys = Object.keys(map.data ?? {});
      assert.deepEqual(
        keys.filter((key) => !VARIABLES.includes(key)),
        [],
        `${map.metadata.name}: every key is a setting`,
      );
      assert.deepEqual(keys.filter(secret), [], `${map.metadata.name}: no secret setting in a ConfigMap`);
      for (const value of Object.values(map.data ?? {}))
        assert.doesNotMatch(String(value), /:\/\/[^/\s]*:[^/\s]*@/, 'no password in a URL');
    }
    for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
      for (const c of deployment.spec.template.spec.containers) {
        const literal = (c.env ?? []).filter((e: { name: string; value?: string }) => e.value !== undefined && secret(e.name));
        assert.deepEqual(literal, [], `${dir}: a secret setting written in the manifest`);
      }
    }
  }
  const single = await render('overlays/single');
  const api = container(one(single, 'Deployment'));
  assert.ok(api.envFrom.some((e: { secretRef?: { name: string } }) => e.secretRef?.name === 'market-data-proxy-keys'));

  // The ConfigMap's settings are valid as they ship, and keep broker data to token holders.
  const settings = one(single, 'ConfigMap').data as Record<string, string>;
  const config = loadConfig({ ...settings, LOG_LEVEL: 'silent', STATE_DIR: tempDir(t) });
  assert.equal(settings.BROKER_ALLOW_FROM, 'none', 'broker data for BROKER_TOKEN holders only');
  assert.match(
    String(config.trustProxy),
    /^[0-9a-f.:/,]+$/,
    'TRUST_PROXY names addresses (the ingress controller), not true or a hop count',
  );
});

test('the IBKR gateway: one replica, recreated (never two sessions at once), reached where IBKR_GATEWAY_URL says, by the service pods only', async () => {
  const gateway = await render('ibkr-gateway');
  const deployment = one(gateway, 'Deployment', 'ibkr-gateway');
  assert.equal(deployment.spec.replicas, 1);
  assert.equal(deployment.spec.strategy.type, 'Recreate');
  const service = one(gateway, 'Service', 'ibkr-gateway');
  const url = new URL(one(await render('overlays/single'), 'ConfigMap').data.IBKR_GATEWAY_URL);
  assert.equal(url.hostname, service.metadata.name);
  assert.equal(Number(url.port), service.spec.ports[0].port);
  const policy = one(gateway, 'NetworkPolicy', 'ibkr-gateway');
  assert.deepEqual(policy.spec.ingress[0].from, [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': NAME } } }]);
});
