/** Waiting on a child process's standard output, for tests that start the tool or a server and read what it prints. */
import type { ChildProcess } from 'node:child_process';

/** Resolves with everything the child printed on stdout once it matches `re`; rejects after `timeoutMs`. */
export function waitForOutput(child: ChildProcess, re: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} within ${timeoutMs} ms: ${out}`)), timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (re.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
  });
}
