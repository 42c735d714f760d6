/** One writer per data folder, across processes: a lock (proper-lockfile) that every run and the scheduler take. */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve, sep } from 'node:path';
import lockfile from 'proper-lockfile';
import { dataFolder } from '../config/data-folder.ts';
import { DataLockedError } from '../errors.ts';
import { processAlive } from '../util/processes.ts';

/** A lock not refreshed for this long belongs to a dead process and may be taken over. */
const STALE_MS = 10_000;
/** How often a holder refreshes its lock. */
const UPDATE_MS = 2_000;
/** Pause between attempts while waiting for the lock. */
const RETRY_MS = 500;

/**
 * Creates a folder one level at a time. Node 20's recursive mkdirSync never returns for some paths (under /proc it
 * spins), while a single-level mkdir fails at once with a clear code.
 */
function ensureDir(dir: string): void {
  const parts = resolve(dir).split(sep);
  let path = parts[0] || sep;
  for (const part of parts.slice(1)) {
    path = join(path, part);
    if (existsSync(path)) {
      if (!statSync(path).isDirectory()) throw Object.assign(new Error(`${path} is not a folder`), { code: 'ENOTDIR' });
      continue;
    }
    mkdirSync(path);
  }
}

interface Owner {
  pid: number;
  host: string;
  what: string;
  since: string;
}

function readOwner(file: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Owner;
  } catch {
    // No owner file: no lock, or a holder that has not written it yet.
    return undefined;
  }
}

/** A held lock. */
export interface DataLock {
  release(): Promise<void>;
}

/** Who takes the lock: what it does (shown to others who find it held), how long it waits, what it does if it loses it. */
export interface LockHolder {
  readonly what: string;
  readonly waitSecs: number;
  readonly onLost: (e: Error) => void;
  /** Called once when the lock is held by another process and this holder is going to wait for it, with who holds it. */
  readonly onWait?: (owner: string) => void;
}

/** Takes the data folder's lock, waiting up to `waitSecs`; `onLost` is called if another process takes it over. */
export async function lockDataDir(dataDir: string, holder: LockHolder): Promise<DataLock> {
  const { what, waitSecs, onLost } = holder;
  try {
    ensureDir(dataDir);
    accessSync(dataDir, constants.W_OK);
  } catch (e) {
    throw new Error(
      `the data folder ${dataDir} cannot be created or written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); choose another with --data-dir or POOL_EXPORT_DATA_DIR`,
      { cause: e },
    );
  }
  const { lockOwner: ownerFile, lock: lockPath } = dataFolder(dataDir);
  // A lock left by a process that died (SIGKILL, power loss) is taken over at once instead of after STALE_MS. A
  // zombie (killed, not yet reaped: under a container's bare PID 1 it never is) counts as dead.
  const owner = readOwner(ownerFile);
  if (owner && owner.host === hostname() && !processAlive(owner.pid)) {
    rmSync(lockPath, { recursive: true, force: true });
    rmSync(ownerFile, { force: true });
  }
  const ownerText = () => {
    const o = readOwner(ownerFile);
    return o ? `pid ${o.pid}, ${o.what}, since ${o.since}` : 'owner unknown';
  };
  let released = false;
  const attempt = (retries: number) =>
    lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      stale: STALE_MS,
      update: UPDATE_MS,
      retries: retries > 0 ? { retries, factor: 1, minTimeout: RETRY_MS, maxTimeout: RETRY_MS } : 0,
      // proper-lockfile checks for a release after its periodic utimes but not after the stat before it: a release
      // while that stat is under way reads as a lock lost (its lockfile.js, updateLock). Ours is not lost then.
      onCompromised: (e: Error) => {
        if (!released) onLost(e);
      },
    });
  const locked = (e: unknown) => (e as { code?: string }).code === 'ELOCKED';
  let release: () => Promise<void>;
  try {
    release = await attempt(0);
  } catch (e) {
    if (!locked(e)) throw e;
    if (waitSecs <= 0) throw new DataLockedError(dataDir, ownerText());
    // Held: say by whom before waiting (a scheduled run waiting for a manual one says so in its log).
    holder.onWait?.(ownerText());
    try {
      release = await attempt(Math.ceil((waitSecs * 1000) / RETRY_MS));
    } catch (e2) {
      if (!locked(e2)) throw e2;
      throw new DataLockedError(dataDir, ownerText());
    }
  }
  try {
    writeFileSync(
      ownerFile,
      JSON.stringify({ pid: process.pid, host: hostname(), what, since: new Date().toISOString() }),
    );
  } catch (e) {
    // A full disk, say: give the lock back and leave no empty owner file behind.
    rmSync(ownerFile, { force: true });
    await release();
    throw e;
  }
  return {
    async release() {
      released = true;
      rmSync(ownerFile, { force: true });
      await release();
    },
  };
}
