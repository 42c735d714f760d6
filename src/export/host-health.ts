/**
 * Hosts a run gave up on: a request to a host that ended its retries on a time-out or an unreachable host makes the
 * run's later requests there fail at once with the same error, rather than each spending its own attempts (eight of
 * `timeoutMs` each) on a host that has stopped answering. A task with a standby route on another host moves there as
 * after its own retries; the others fail with the one message the summary groups. The next run asks again.
 */
import { UpstreamError } from '../errors.ts';

/** Failures that say the host, not the request, is the trouble. */
const HOST_KINDS: ReadonlySet<string> = new Set(['timeout', 'unreachable']);

export class HostHealth {
  private readonly given = new Map<string, UpstreamError>();

  /** The error the run gave `host` up with, as a failure that is not retried; undefined while it is not given up. */
  down(host: string): UpstreamError | undefined {
    const e = this.given.get(host);
    return e && new UpstreamError(e.message, { kind: e.kind, retryable: false, ...e.extra });
  }

  /** A request to `host` ended its retries with `e`: a failure of the host gives the host up for this run. */
  gaveUp(host: string, e: unknown): void {
    if (e instanceof UpstreamError && HOST_KINDS.has(e.kind) && !this.given.has(host)) this.given.set(host, e);
  }
}
