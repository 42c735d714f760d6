/** Progress bars for long runs on a terminal (cli-progress): tasks done, rows, pages per second, ETA. */
import cliProgress from 'cli-progress';
import { chainName } from '../config/chains.ts';
import type { ProgressSink } from '../export/run-args.ts';
import type { Task, TaskResult, TaskStats } from '../export/task.ts';

/** The key of a task's bar: the shards of a backfill share their task's. */
const keyOf = (task: Task) => `${task.ds.name}@${task.chainId}`;

/** The terminal's "erase to the end of the line". */
const ERASE_TO_END = '\u001b[K';

/** Redraws at most this often. */
const FPS = 5;

/** One overall bar plus one line per running task. */
export class TerminalProgress implements ProgressSink {
  private readonly multi = new cliProgress.MultiBar(
    {
      clearOnComplete: true,
      hideCursor: true,
      fps: FPS,
      format: '{label} |{bar}| {percentage}% {detail}',
      barsize: 24,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  private overall: cliProgress.SingleBar | undefined;
  /** The bar of each running task, by dataset and chain. */
  private readonly bars = new Map<string, cliProgress.SingleBar>();
  /** Whether the bars are drawn (from `start` to `stop`). */
  private drawing = false;
  private rows = 0;
  private pages = 0;
  private readonly started = performance.now();

  start(total: number): void {
    this.drawing = true;
    this.overall = this.multi.create(total, 0, { label: 'tasks'.padEnd(34), detail: '' });
  }

  page(task: Task, stats: TaskStats, fraction: number | undefined): void {
    let bar = this.bars.get(keyOf(task));
    if (!bar)
      this.bars.set(
        keyOf(task),
        (bar = this.multi.create(1000, 0, {
          label: `${task.ds.name}@${chainName(task.chainId)}`.slice(0, 34).padEnd(34),
          detail: '',
        })),
      );
    this.pages++;
    const secs = (performance.now() - this.started) / 1000;
    const eta = fraction && fraction > 0 ? ` eta ${Math.round((secs * (1 - fraction)) / fraction)}s` : '';
    bar.update(Math.round((fraction ?? 0) * 1000), { detail: `${stats.pages} pages${eta}` });
  }

  done(result: TaskResult): void {
    const bar = this.bars.get(keyOf(result.task));
    if (bar) {
      this.multi.remove(bar);
      this.bars.delete(keyOf(result.task));
    }
    this.rows += result.stats.rows;
    const secs = (performance.now() - this.started) / 1000;
    this.overall?.increment(1, {
      detail: `${this.rows} rows, ${(this.pages / Math.max(secs, 0.001)).toFixed(1)} pages/s`,
    });
  }

  /**
   * Writes a line (with its newline) above the bars: it is printed at the next redraw, which clears the bars first, so
   * that no line is torn by them. Before the bars start and after they stop it is written at once.
   */
  log(line: string): void {
    // The redraw clears only the line the cursor is on before it prints the lines logged; each of them clears the rest
    // of its own line (a bar's tail) after its text.
    if (this.drawing) this.multi.log(line.replace(/\n/g, `${ERASE_TO_END}\n`));
    else process.stderr.write(line);
  }

  stop(): void {
    // A last redraw prints the lines logged since the one before (`MultiBar.stop` clears the bars without them).
    if (this.drawing) this.multi.update();
    this.drawing = false;
    this.multi.stop();
  }
}
