/**
 * A vitest global setup: one sandbox process for the whole unit tier, started once per test process tree (under
 * `make mutation`, once per Stryker worker instead of once per mutant). Tests that read it must not change its world
 * (no advance, no reorganisation); a test that does starts its own. Its URL and key reach tests by `inject`.
 */
import type { TestProject } from 'vitest/node';
import { startSandbox } from '../../src/sandbox/spawn.ts';

/** The world of the shared sandbox: small, one chain, a few days, so that a whole run takes a second or two. */
export const SHARED_SANDBOX_FLAGS = ['--scale', '100', '--history-days', '3', '--chains', '56'];

declare module 'vitest' {
  export interface ProvidedContext {
    sharedSandbox: { url: string; apiKey: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sb = await startSandbox(SHARED_SANDBOX_FLAGS);
  project.provide('sharedSandbox', { url: sb.url, apiKey: sb.apiKey });
  return () => sb.stop();
}
