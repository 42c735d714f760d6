/**
 * The deployment recipes of `deploy/`: each Kubernetes manifest validated against the Kubernetes schemas
 * (`kubernetes-models`), with the settings the README promises (one writer, memory limits, probes on the metrics
 * port, the image's user, a key from a file) and command lines the CLI accepts; the systemd units checked by
 * `systemd-analyze verify` (Debian's systemd, `make ops-tools`) in a root of their own.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { CronJob } from 'kubernetes-models/batch/v1';
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { IMAGE_USER } from '../../scripts/image.ts';
import { cli } from '../support/cli-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const K8S = join(ROOT, 'deploy/kubernetes');
const SYSTEMD = join(ROOT, 'deploy/systemd');

const haveSystemd = spawnSync('systemd-analyze', ['--version']).status === 0;
if (!haveSystemd && process.env.CI === 'true')
  throw new Error('systemd-analyze is not installed, and CI=true: `make ops-tools` installs Debian’s systemd package');

/** The model class of each kind the manifests hold. */
const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'batch/v1 CronJob': CronJob,
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Secret': Secret,
  'v1 ConfigMap': ConfigMap,
};

// Manifests are read as plain YAML, then validated by the models.
type Doc = Record<string, any>;

/** Every document of every manifest, validated by its Kubernetes model (which throws on any schema violation). */
function manifests(): { file: string; doc: Doc }[] {
  return readdirSync(K8S)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((d) => {
        if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}`);
        return { file, doc: d.toJS() as Doc };
      }),
    );
}

/** The pod spec of a CronJob or a Deployment. */
const podOf = (doc: Doc): Doc =>
  doc.kind === 'CronJob' ? doc.spec.jobTemplate.spec.template.spec : doc.spec.template.spec;

let tmp: string | undefined;
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the Kubernetes recipes', () => {
  const all = manifests();

  it('are valid against the Kubernetes schemas, every document of every file', () => {
    expect(new Set(all.map((m) => m.file))).toEqual(
      new Set(['cronjob.yaml', 'cronjob-bucket.yaml', 'deployment.yaml']),
    );
    for (const { file, doc } of all) {
      const Model = MODELS[`${doc.apiVersion} ${doc.kind}`];
      expect(Model, `${file}: ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc as never).validate(), file).not.toThrow();
    }
    // The check is not vacuous: a wrong field type is refused.
    const cron = structuredClone(all.find((m) => m.doc.kind === 'CronJob')!.doc);
    cron.spec.jobTemplate.spec.backoffLimit = 'none';
    expect(() => new CronJob(cron as never).validate()).toThrow();
  });

  it('keep one writer per data folder, the memory limit, the image user and the key in a file', () => {
    const workloads = all.filter((m) => m.doc.kind === 'CronJob' || m.doc.kind === 'Deployment');
    expect(workloads).toHaveLength(3);
    for (const { file, doc } of workloads) {
      if (doc.kind === 'CronJob') expect(doc.spec.concurrencyPolicy, file).toBe('Forbid');
      else expect([doc.spec.replicas, doc.spec.strategy.type], file).toEqual([1, 'Recreate']);
      const pod = podOf(doc);
      expect([pod.securityContext.runAsUser, pod.securityContext.runAsNonRoot], file).toEqual([IMAGE_USER, true]);
      const [c] = pod.containers;
      expect(c.resources.limits.memory, file).toBe('512Mi');
      expect(c.env.find((e: Doc) => e.name === 'POOL_EXPORT_API_KEY_FILE')?.value, file).toBe('/config/api-key');
      expect(
        c.env.some((e: Doc) => e.name === 'POOL_EXPORT_API_KEY'),
        file,
      ).toBe(false);
      expect(
        c.volumeMounts.map((v: Doc) => v.mountPath),
        file,
      ).toEqual(expect.arrayContaining(['/data', '/config']));
      expect(pod.terminationGracePeriodSeconds, file).toBeGreaterThanOrEqual(30);
    }
  });

  it('probe /healthz and /readyz on the port `schedule --metrics-port` serves, and the Service scrapes it', () => {
    const dep = all.find((m) => m.doc.kind === 'Deployment')!.doc;
    const [c] = podOf(dep).containers;
    const port = c.args[c.args.indexOf('--metrics-port') + 1];
    expect(c.args.slice(0, 1)).toEqual(['schedule']);
    expect(c.args[c.args.indexOf('--metrics-host') + 1]).toBe('0.0.0.0');
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: Number(port), protocol: 'TCP' }]);
    expect([c.livenessProbe.httpGet.path, c.livenessProbe.httpGet.port]).toEqual(['/healthz', 'metrics']);
    expect([c.readinessProbe.httpGet.path, c.readinessProbe.httpGet.port]).toEqual(['/readyz', 'metrics']);
    const svc = all.find((m) => m.doc.kind === 'Service')!.doc;
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    expect(dep.spec.template.metadata.annotations['prometheus.io/port']).toBe(port);
  });

  it('give `run` command lines the CLI accepts (checked with --dry-run)', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pool-export-recipes-'));
    for (const { file, doc } of all.filter((m) => m.doc.kind === 'CronJob')) {
      const args: string[] = [...podOf(doc).containers[0].args];
      expect(args[0], file).toBe('run');
      // Paths of the pod become paths here: the metrics file in a folder that exists, the config file the
      // ConfigMap mounts (its own text).
      const configMap = all.find((m) => m.doc.kind === 'ConfigMap')!.doc;
      const config = join(tmp, 'config.json');
      writeFileSync(config, configMap.data['config.json']);
      const local = args.map((a, i) =>
        args[i - 1] === '--metrics-file' ? join(tmp!, 'pool-export.prom') : args[i - 1] === '--config' ? config : a,
      );
      const r = await cli([...local, '--dry-run'], { POOL_EXPORT_DATA_DIR: join(tmp, file) });
      expect(r.code, `${file}: ${r.stderr}`).toBe(0);
      expect(r.stdout, file).toMatch(/^plan: \d+ tasks/);
    }
  });
});

describe.runIf(haveSystemd)('the systemd units', () => {
  it('pass systemd-analyze verify, with no warning, in a root holding the paths they name', () => {
    tmp ??= mkdtempSync(join(tmpdir(), 'pool-export-recipes-'));
    const root = join(tmp, 'root');
    const units = readdirSync(SYSTEMD).filter((f) => /\.(service|timer)$/.test(f));
    expect(units.sort()).toEqual(['pool-export-schedule.service', 'pool-export.service', 'pool-export.timer']);
    // The units' executables, as the README installs them, and systemd's own units (sysinit.target, timers.target…).
    for (const exe of ['opt/pool-export/node_modules/node24/bin/node', 'opt/pool-export/bin/pool-export.js']) {
      mkdirSync(join(root, exe, '..'), { recursive: true });
      copyFileSync('/usr/bin/true', join(root, exe));
      chmodSync(join(root, exe), 0o755);
    }
    cpSync('/usr/lib/systemd/system', join(root, 'usr/lib/systemd/system'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
    for (const u of units) copyFileSync(join(SYSTEMD, u), join(root, 'etc/systemd/system', u));
    const verify = (names: string[]) =>
      spawnSync(
        'systemd-analyze',
        ['verify', `--root=${root}`, '--man=no', ...names.map((u) => `/etc/systemd/system/${u}`)],
        {
          encoding: 'utf8',
        },
      );
    const r = verify(units);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
    // The check is not vacuous: a setting systemd cannot parse is reported.
    const broken = readFileSync(join(SYSTEMD, 'pool-export.timer'), 'utf8').replace(
      'OnCalendar=*:0/5',
      'OnCalendar=every five',
    );
    const file = join(root, 'etc/systemd/system/pool-export.timer');
    writeFileSync(file, broken);
    expect(verify(['pool-export.timer']).stderr).toMatch(/Failed to parse calendar specification/);
  });
});
