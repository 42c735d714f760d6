/**
 * The upstream's heads, read again every minute while `schedule` serves metrics: the lag gauges are measured against
 * them, and `/readyz` answers 200 once one probe passed (one head read). One head query per route and minute.
 */
import type { Config } from '../config/config.ts';
import { type DatasetKey, readHeads } from '../store/freshness.ts';
import type { ExportMetrics } from './metrics.ts';
import type { Readiness } from './metrics-server.ts';

/** Milliseconds between two readings of the heads. */
export const HEAD_EVERY_MS = 60_000;

/** Reads the heads of `keys`' routes now and every `everyMs`, until stopped. */
export class HeadWatch {
  private why = 'the upstream has not been probed yet';
  private passed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopper = new AbortController();
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly opts: {
      readonly config: Config;
      readonly keys: readonly DatasetKey[];
      readonly metrics: ExportMetrics;
      readonly everyMs?: number;
    },
  ) {}

  /** Reads the heads now, then every `everyMs`. */
  start(): void {
    const tick = () => {
      this.reading = this.read().finally(() => {
        if (!this.stopper.signal.aborted) this.timer = setTimeout(tick, this.opts.everyMs ?? HEAD_EVERY_MS);
      });
    };
    tick();
  }

  /** Ready once a head was read; the reason otherwise. */
  readiness(): Readiness {
    return { ready: this.passed, why: this.why };
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    clearTimeout(this.timer);
    await this.reading;
  }

  private async read(): Promise<void> {
    try {
      const r = await readHeads(this.opts.config, this.opts.keys, { signal: this.stopper.signal });
      // Heads that could not be read are unknown: the lag is then measured against the clock, as `status` does.
      this.opts.metrics.setHeads(r.heads);
      if (r.heads.size > 0) this.passed = true;
      else this.why = r.why ?? 'no route to probe';
    } catch (e) {
      this.why = `the upstream's head could not be read (${(e as Error).message})`;
    }
  }
}
