/** Progress bars for long runs on a terminal (cli-progress): tasks done, rows, pages per second, ETA. */
import cliProgress from 'cli-progress';
import { chainName } from '../config/chains.ts';
import type { ProgressSink } from '../export/run-export.ts';
import type { Task, TaskResult, TaskStats } from '../export/task.ts';

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
  private readonly bars = new Map<Task, cliProgress.SingleBar>();
  private rows = 0;
  private pages = 0;
  private readonly started = performance.now();

  start(total: number): void {
    this.overall = this.multi.create(total, 0, { label: 'tasks'.padEnd(34), detail: '' });
  }

  page(task: Task, stats: TaskStats, fraction: number | undefined): void {
    let bar = this.bars.get(task);
    if (!bar)
      this.bars.set(
        task,
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
    const bar = this.bars.get(result.task);
    if (bar) {
      this.multi.remove(bar);
      this.bars.delete(result.task);
    }
    this.rows += result.stats.rows;
    const secs = (performance.now() - this.started) / 1000;
    this.overall?.increment(1, {
      detail: `${this.rows} rows, ${(this.pages / Math.max(secs, 0.001)).toFixed(1)} pages/s`,
    });
  }

  stop(): void {
    this.multi.stop();
  }
}
