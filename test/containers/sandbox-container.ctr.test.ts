/**
 * The upstream in a container: stopped, killed, restarted and paused in the middle of a backfill.
 * The image is built from the project's own files (no registry); the container uses host networking.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { callControl, PINNED_NOW, type SandboxEndpoint } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { freePort } from '../support/ports.ts';
import { waitForRequests } from '../support/sandbox-client.ts';
import { buildSandboxImage } from './sandbox-image.ts';

const KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
let container: StartedTestContainer;
let sb: SandboxEndpoint;
let dir: string;
/** Patient settings: a 1.5 s time-out and 12 attempts (about half a minute of backoff) ride out a restart. */
let patient: string;
/** Impatient settings: 3 attempts give up within seconds, to see a clean failure. */
let impatient: string;

/** Waits until the sandbox answers again after its container started. */
async function waitReady(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${sb.url}/_sandbox/info`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the sandbox container did not come back within 30 s');
}

async function docker() {
  return (await getContainerRuntimeClient()).container.getById(container.getId());
}

/** Slows every data request so that a backfill of the events job lasts several seconds, and resets the counters. */
async function slow(): Promise<void> {
  await callControl(sb.url, 'faults', { latencyMs: 60 });
  await callControl(sb.url, 'stats', {});
}

/** Waits until the sandbox has served `n` data requests: the backfill is under way, however fast the machine is. */
const run = (data: string, config: string, opts: Parameters<typeof cli>[2] = {}) =>
  cli(['run', '--chains', 'bsc', '--jobs', 'events', '--config', config], sandboxEnv(sb, data), opts);
/** Waits until `cond` holds (checked every 50 ms, for up to two minutes). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2400 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!cond()) throw new Error('the awaited event did not come within two minutes');
}

beforeAll(async () => {
  const image = await buildSandboxImage();
  const port = await freePort();
  container = await new GenericContainer(image)
    .withNetworkMode('host')
    // History pinned to one end: a restarted container must serve the same rows, whatever the wall clock says.
    .withCommand(['--port', String(port), '--api-key', KEY, '--scale', '4000', '--chains', '56', '--now', PINNED_NOW])
    .withWaitStrategy(Wait.forLogMessage(/ready http/))
    .start();
  const url = `http://127.0.0.1:${port}`;
  sb = { url, apiKey: KEY, control: (path, body) => callControl(url, path, body) };
  dir = mkdtempSync(join(tmpdir(), 'pool-export-ctr-'));
  patient = join(dir, 'patient.json');
  writeFileSync(patient, JSON.stringify({ timeoutMs: 1500, pageSize: 100, batchRows: 200, maxAttempts: 12 }));
  impatient = join(dir, 'impatient.json');
  writeFileSync(impatient, JSON.stringify({ timeoutMs: 1000, pageSize: 100, batchRows: 200, maxAttempts: 3 }));
}, 300_000);

afterAll(async () => {
  await container?.stop({ remove: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Container = Awaited<ReturnType<typeof docker>>;

/**
 * The scenario every test here plays: a backfill of the events job on bsc against a slowed upstream; once the sandbox
 * has served 30 requests (the run is under way, however fast the machine is), `disrupt` does something to the
 * container while the run goes on. Returns the run's outcome.
 */
async function disruptedRun(
  data: string,
  config: string,
  disrupt: (c: Container, run: { stderr: () => string }) => Promise<void>,
) {
  await slow();
  let stderr = '';
  const running = run(data, config, { onStderr: (s) => (stderr = s) });
  await waitForRequests(sb, 30);
  await disrupt(await docker(), { stderr: () => stderr });
  return running;
}

/** A re-run with patient settings ends well, and the export is exact. */
async function expectExactRerun(data: string): Promise<void> {
  const again = await run(data, patient);
  expect(again.code, again.stdout + again.stderr).toBe(0);
  expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
}

describe('the upstream in a container', () => {
  it('serves the sandbox from an image built locally, on the host network', async () => {
    const info = await callControl<{ chains: unknown[] }>(sb.url, 'info');
    expect(info.chains).toHaveLength(1);
  });

  it('a run rides out a container restart in the middle of a backfill and ends exact', async () => {
    const data = join(dir, 'restart');
    const r = await disruptedRun(data, patient, async () => {
      await container.restart();
      await waitReady();
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(Number(/(\d+) retries/.exec(r.stdout)?.[1])).toBeGreaterThan(0);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
  }, 240_000);

  it('a run rides out a paused (hung) container: time-outs are retried after it resumes', async () => {
    const data = join(dir, 'pause');
    const r = await disruptedRun(data, patient, async (c, running) => {
      await c.pause();
      // Resumed once the run has met a time-out and logged its retry: an event of the run, not a span of the clock.
      await until(() => /"event":"retry".*no answer within 1500 ms/.test(running.stderr()));
      await c.unpause();
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/no answer within 1500 ms/);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
  }, 240_000);

  it('a run stops cleanly when the container is killed and stays down; a re-run after it starts again is exact', async () => {
    const data = join(dir, 'kill');
    let killed: Container | undefined;
    try {
      const r = await disruptedRun(data, impatient, async (c) => {
        killed = c;
        await c.kill();
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /FAILED (dodoex\.\w+ on bsc|\d+ tasks \(.* on bsc\)): .*(ECONNREFUSED|connection|fetch failed|socket)/i,
      );
      expect(r.stdout + r.stderr).not.toContain(KEY);
    } finally {
      // started again whatever the assertions say, so that one failure does not take the next test with it
      await killed?.start();
      await waitReady();
    }
    await expectExactRerun(data);
  }, 240_000);

  it('a run stops cleanly when the container hangs past the retry budget; after a stop and start, a re-run is exact', async () => {
    const data = join(dir, 'stop');
    const r = await disruptedRun(data, impatient, (c) => c.pause());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAILED (dodoex\.\w+ on bsc|\d+ tasks \(.* on bsc\)): no answer within 1000 ms from http:\/\/127\.0\.0\.1:\d+(\/subgraph\/graphql\?chainId=56&schemaName=dodoex&apikey=\*\*\*)? \(gave up after 3 attempts\)/,
    );
    const c = await docker();
    await c.unpause();
    await c.stop({ t: 5 });
    await c.start();
    await waitReady();
    await expectExactRerun(data);
  }, 240_000);
});
