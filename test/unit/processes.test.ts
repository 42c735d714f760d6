/** Other processes as /proc shows them: alive, zombie, parent, command line with secrets masked, a port's holder. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { commandLineOf, commandOf, parentOf, portHolder, processAlive } from '../../src/util/processes.ts';

/** Resolves once /proc shows the process in the given state (the kernel's own event, not a clock). */
async function inState(pid: number, state: string): Promise<void> {
  for (;;) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (text.slice(text.lastIndexOf(')') + 2).startsWith(state)) return;
    } catch {
      // not there yet
    }
    await new Promise((r) => setImmediate(r));
  }
}

describe('processes', () => {
  it('this process is alive, with its parent and its command', () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(parentOf(process.pid)).toBe(process.ppid);
    expect(commandOf(process.pid)).toBe(readFileSync(`/proc/${process.pid}/comm`, 'utf8').trim());
    expect(commandLineOf(process.pid)).toContain(process.execPath.split('/').at(-1));
    expect(processAlive(2 ** 22 + 1)).toBe(false);
    expect(parentOf(2 ** 22 + 1)).toBeUndefined();
    expect(commandOf(2 ** 22 + 1)).toBeUndefined();
    expect(commandLineOf(2 ** 22 + 1)).toBeUndefined();
  });

  it('a zombie (exited, not reaped by its parent) is not alive', async () => {
    // `sleep 0` exits at once; its parent execs into a long sleep that never reaps it.
    const sh = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = await new Promise<number>((r) => sh.stdout.once('data', (d) => r(Number(String(d).trim()))));
    try {
      await inState(pid, 'Z');
      expect(processAlive(pid)).toBe(false);
      expect(parentOf(pid)).toBe(sh.pid);
    } finally {
      sh.kill('SIGKILL');
    }
  });

  it('masks secrets in command lines and cuts long ones', async () => {
    const child = spawn(
      process.execPath,
      ['-e', 'setTimeout(()=>{}, 30000)', '--', '--api-key', 'SECRET1', '--token=SECRET2', 'x'.repeat(300)],
      { stdio: 'ignore' },
    );
    try {
      await inState(child.pid!, 'S');
      const line = commandLineOf(child.pid!)!;
      expect(line).toContain('--api-key ***');
      expect(line).toContain('--token=***');
      expect(line).not.toMatch(/SECRET/);
      expect(line.length).toBe(160);
      expect(line.endsWith('…')).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('names the process listening on a port, and nothing for a port no one holds', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    try {
      const holder = portHolder(port);
      expect(holder?.pid).toBe(process.pid);
      expect(holder?.command).toBe(commandLineOf(process.pid));
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(portHolder(port)).toBeUndefined();
  });
});
