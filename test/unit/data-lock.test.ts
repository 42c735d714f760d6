/** The data folder's lock on a real folder: one holder at a time, who holds it, dead holders, unusable folders. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataLockedError } from '../../src/errors.ts';
import { lockDataDir } from '../../src/store/data-lock.ts';

const root = mkdtempSync(join(tmpdir(), 'pool-export-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const folder = () => join(root, `d${n++}`);
const holder = (what: string, waitSecs = 0) => ({ what, waitSecs, onLost: () => {} });
/**
 * The pid of a process that has ended: free (or reused by a process that is not ours, in which case the lock
 * directory's own staleness would apply; the pid of a child just reaped is not reused this soon).
 */
const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);

describe('the data folder lock', () => {
  it('creates the folder, records its owner, refuses a second holder naming the first, and frees on release', async () => {
    const dir = join(folder(), 'deep', 'er');
    const lock = await lockDataDir(dir, holder('run of events'));
    const owner = JSON.parse(readFileSync(join(dir, '.lock-owner.json'), 'utf8'));
    expect(owner).toEqual({ pid: process.pid, host: hostname(), what: 'run of events', since: expect.any(String) });
    expect(Math.abs(Date.parse(owner.since) - Date.now())).toBeLessThan(60_000);
    const waits: string[] = [];
    const err = await lockDataDir(dir, { ...holder('compact'), onWait: (o) => waits.push(o) }).catch((e) => e);
    expect(waits).toEqual([]);
    expect(err).toBeInstanceOf(DataLockedError);
    expect(err.message).toBe(
      `the data folder ${dir} is in use by another pool-export process (pid ${process.pid}, run of events, since ${owner.since}); wait for it to finish, or pass --wait-lock SECONDS`,
    );
    await lock.release();
    expect(existsSync(join(dir, '.lock-owner.json'))).toBe(false);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    const again = await lockDataDir(dir, holder('compact'));
    await again.release();
  });

  it('a waiting holder says who holds the lock, and gets it once the first releases it', async () => {
    const dir = folder();
    const first = await lockDataDir(dir, holder('run'));
    const waits: string[] = [];
    let told!: () => void;
    const toldWait = new Promise<void>((r) => (told = r));
    const second = lockDataDir(dir, {
      ...holder('schedule', 30),
      onWait: (owner) => {
        waits.push(owner);
        told();
      },
    });
    await toldWait;
    expect(waits).toEqual([expect.stringMatching(new RegExp(`^pid ${process.pid}, run, since \\d{4}-`))]);
    await first.release();
    const lock = await second;
    expect(JSON.parse(readFileSync(join(dir, '.lock-owner.json'), 'utf8')).what).toBe('schedule');
    await lock.release();
  });

  it('a holder that waits in vain is refused naming the owner; one freed late in its wait gets the lock', async () => {
    const dir = folder();
    const first = await lockDataDir(dir, holder('run'));
    const waits: string[] = [];
    const err = await lockDataDir(dir, { ...holder('compact', 1), onWait: (o) => waits.push(o) }).catch((e) => e);
    expect(err).toBeInstanceOf(DataLockedError);
    expect(err.message).toContain(`(pid ${process.pid}, run, since `);
    expect(waits).toEqual([expect.stringMatching(new RegExp(`^pid ${process.pid}, run, since `))]);
    // Freed 1.2 s on, within a wait of 3 s: a holder with no onWait gets it.
    const freed = new Promise<void>((r) => setTimeout(() => void first.release().then(r), 1_200));
    const later = await lockDataDir(dir, holder('later', 3));
    await freed;
    expect(JSON.parse(readFileSync(join(dir, '.lock-owner.json'), 'utf8')).what).toBe('later');
    await later.release();
  });

  it('takes over at once a lock whose owner on this host is dead', async () => {
    const dir = folder();
    mkdirSync(dir, { recursive: true });
    const dead = deadPid();
    mkdirSync(join(dir, '.lock'));
    writeFileSync(
      join(dir, '.lock-owner.json'),
      JSON.stringify({ pid: Number(dead), host: hostname(), what: 'run', since: '2026-01-01T00:00:00.000Z' }),
    );
    const lock = await lockDataDir(dir, holder('next run'));
    expect(JSON.parse(readFileSync(join(dir, '.lock-owner.json'), 'utf8')).what).toBe('next run');
    await lock.release();
  });

  it('keeps a lock whose owner is alive, or on another host, and says who holds it', async () => {
    const dir = folder();
    mkdirSync(join(dir, '.lock'), { recursive: true });
    // On another host, a pid that no process here holds tells nothing: the lock is kept.
    const dead = deadPid();
    writeFileSync(
      join(dir, '.lock-owner.json'),
      JSON.stringify({ pid: dead, host: 'elsewhere', what: 'run of state', since: '2026-01-01T00:00:00.000Z' }),
    );
    await expect(lockDataDir(dir, holder('run'))).rejects.toThrow(
      `(pid ${dead}, run of state, since 2026-01-01T00:00:00.000Z)`,
    );
    writeFileSync(
      join(dir, '.lock-owner.json'),
      JSON.stringify({ pid: process.pid, host: hostname(), what: 'me', since: 'x' }),
    );
    await expect(lockDataDir(dir, holder('run'))).rejects.toThrow(DataLockedError);
    rmSync(join(dir, '.lock-owner.json'));
    await expect(lockDataDir(dir, holder('run'))).rejects.toThrow('(owner unknown)');
  });

  it('a folder that cannot be made names itself, the reason and the fix', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    await expect(lockDataDir(join(file, 'data'), holder('run'))).rejects.toThrow(
      `the data folder ${join(file, 'data')} cannot be created or written (ENOTDIR); choose another with --data-dir or POOL_EXPORT_DATA_DIR`,
    );
  });
});
