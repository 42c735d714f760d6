/**
 * A command run as a person runs it at a terminal: in a pseudo-terminal of 80 columns and 24 rows (util-linux's
 * `script`, which Debian always has), where Ctrl-C is the character the terminal turns into SIGINT for the whole
 * foreground process group. What the person sees is read back through a headless terminal emulator (xterm.js), which
 * plays the cursor moves, line clears and wraps of the output as a terminal does.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import xterm from '@xterm/headless';

export const COLUMNS = 80;
export const ROWS = 24;

/** What a command did in the terminal. */
export interface TerminalRun {
  /** Its exit status as `script` reports it: the command's code, or 128 + the signal that ended it. */
  readonly code: number | null;
  /** Every byte it wrote to the terminal, escapes included. */
  readonly raw: string;
  /** Milliseconds from Ctrl-C to its end, when Ctrl-C was pressed. */
  readonly afterCtrlC?: number;
  /** The processes of its session (its terminal's) still running once it ended: none, when it cleaned up after itself. */
  readonly left: string[];
}

/** A word for `sh`, quoted. */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `argv` in a pseudo-terminal of 80×24 with `env`. `ctrlC` presses Ctrl-C once the output so far satisfies it (a
 * second one `twice` ms later, when given).
 */
export function inTerminal(
  argv: readonly string[],
  opts: {
    readonly env: NodeJS.ProcessEnv;
    readonly cwd?: string;
    readonly ctrlC?: (raw: string) => boolean;
    readonly twice?: number;
  },
): Promise<TerminalRun> {
  // The shell `script` starts leads the terminal's session; its pid names the session (written to a file, off screen).
  const sessionFile = join(mkdtempSync(join(tmpdir(), 'pool-export-pty-')), 'session');
  const command = `echo $$ > ${quote(sessionFile)}; stty cols ${COLUMNS} rows ${ROWS}; exec ${argv.map(quote).join(' ')}`;
  // -q: no banner; -f: flush at once; -e: exit with the command's status; -c: the command; /dev/null: no typescript.
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...opts.env, TERM: 'xterm-256color' },
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let raw = '';
  let pressed: number | undefined;
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      raw += d;
      if (pressed === undefined && opts.ctrlC?.(raw)) {
        pressed = performance.now();
        child.stdin.write('\u0003');
        if (opts.twice !== undefined) setTimeout(() => child.stdin.write('\u0003'), opts.twice);
      }
    });
    child.on('close', (code) => {
      const end = performance.now();
      const session = readFileSync(sessionFile, 'utf8').trim();
      rmSync(dirname(sessionFile), { recursive: true, force: true });
      const left = spawnSync('ps', ['-o', 'pid=,args=', '-s', session], { encoding: 'utf8' })
        .stdout.split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      resolve({ code, raw, left, ...(pressed === undefined ? {} : { afterCtrlC: end - pressed }) });
    });
  });
}

/** What a person sees once the output has been played on an 80-column terminal. */
export interface Screen {
  /** The screen and everything that scrolled above it, trailing spaces trimmed, trailing empty lines dropped. */
  readonly lines: string[];
  /**
   * How many of those lines continue the one above because it ran past the last column (the terminal wrapped it), but
   * for a word longer than a line (an address): no line breaks one of those, and the terminal's own wrap keeps it whole
   * for copying.
   */
  readonly overflows: number;
}

/** Plays `raw` on an 80×24 terminal and reads back every line. */
export async function screen(raw: string): Promise<Screen> {
  const term = new xterm.Terminal({ cols: COLUMNS, rows: ROWS, scrollback: 100_000, allowProposedApi: true });
  await new Promise<void>((r) => term.write(raw, r));
  const buffer = term.buffer.active;
  const lines: string[] = [];
  let overflows = 0;
  for (let i = 0; i < buffer.length; i++) {
    const line = buffer.getLine(i);
    // A row that continues a row holding one long word (after its indentation) is that word's, not an overflow.
    if (line?.isWrapped && /\S\s+\S/.test(lines.at(-1) ?? '')) overflows++;
    lines.push(line?.translateToString(true) ?? '');
  }
  term.dispose();
  while (lines.length && lines.at(-1) === '') lines.pop();
  return { lines, overflows };
}
