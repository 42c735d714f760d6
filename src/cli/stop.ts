/**
 * Stop requests of a command that writes (`run`): the first SIGINT or SIGTERM asks the work to stop (an abort signal:
 * requests and the DuckDB transaction under way are cancelled, and the tasks end within a second); a second one of either
 * ends the process at once (DuckDB's write-ahead log and the lake's publish journal make even that safe; the next run
 * finishes or undoes what it left). Once the work has ended, `end` ends the process by the signal it was sent, as a
 * program stopped by a signal should: a shell reports 130 for SIGINT and 143 for SIGTERM, and a shell loop or `make`
 * that ran it stops too, where an ordinary exit code would let them go on.
 */

/** How long a signal sent to itself may take to end the process before it exits by itself. */
const FALLBACK_MS = 1000;

/** The signals that ask for a stop. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Watches for stop requests from now on. */
export class StopRequests {
  private readonly controller = new AbortController();
  private first: NodeJS.Signals | undefined;
  private readonly listener = (sig: NodeJS.Signals) => {
    if (this.first) return this.force(sig);
    this.first = sig;
    this.onStop(sig);
    this.controller.abort();
  };

  /** `onStop` is told of the first request (to say what happens next). */
  constructor(private readonly onStop: (sig: NodeJS.Signals) => void) {
    for (const s of STOP_SIGNALS) process.on(s, this.listener);
  }

  /** Aborted at the first request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal of the first request, if one came. */
  get by(): NodeJS.Signals | undefined {
    return this.first;
  }

  /**
   * The process ends now, by `sig`: it sends `sig` to itself without this watcher. A library's own exit handler (the
   * lock file's) may take it first; such a handler removes itself and sends it again, and the default action then ends
   * the process. Should one keep it, the process exits with the code a shell gives that signal, 128 + its number.
   */
  private force(sig: NodeJS.Signals): void {
    for (const s of STOP_SIGNALS) process.removeListener(s, this.listener);
    process.kill(process.pid, sig);
    setTimeout(() => process.exit(128 + (sig === 'SIGINT' ? 2 : 15)), FALLBACK_MS);
  }

  /**
   * Ends watching. When a request came, the process then ends by its signal; otherwise it goes on (and the signals have
   * their default action again).
   */
  end(): void {
    if (this.first) this.force(this.first);
    for (const s of STOP_SIGNALS) process.removeListener(s, this.listener);
  }
}
