/**
 * The sandbox the conformance tests ask (test/integration/sandbox-conformance*.int.test.ts), started as a real
 * process, and what they check a row's scalars against: graph-node's wire text of each type.
 */

import { afterAll, beforeAll, expect } from 'vitest';
import { rootNames } from '../../src/sandbox/naming.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { KNOWN_CHAINS } from '../../src/sandbox/timeline.ts';
import type { EntityModel } from '../../src/schemas/entity-model.ts';

export const SCHEMAS = ['dodoex', 'token', 'mine'] as const;

/** The collection root of an entity on the self-hosted route (the sandbox's default profile: graph-node's current naming). */
export const plural = (e: EntityModel) => rootNames(e.name, 'current').plural;
export const CHAINS = KNOWN_CHAINS.map((c) => c.chainId);
export const ENCODING: Record<string, RegExp> = {
  BigInt: /^-?\d+$/,
  BigDecimal: /^-?\d+(\.\d*[1-9])?$/,
  Bytes: /^0x([0-9a-f]{2})*$/,
  ID: /^.+$/,
};

export function scalarSelection(e: EntityModel): string {
  return e.fields
    .filter((f) => !f.ref)
    .map((f) => f.name)
    .join(' ');
}

export function checkEncoding(e: EntityModel, row: Record<string, unknown>): void {
  for (const f of e.fields.filter((x) => !x.ref)) {
    const v = row[f.name];
    if (v === null) {
      expect(f.nonNull, `${e.name}.${f.name} is null but non-null in the schema`).toBe(false);
      continue;
    }
    if (f.list) continue;
    if (f.type === 'Int') expect(typeof v, `${e.name}.${f.name}`).toBe('number');
    else if (f.type === 'Boolean') expect(typeof v).toBe('boolean');
    else if (ENCODING[f.type]) expect(v, `${e.name}.${f.name}`).toMatch(ENCODING[f.type]!);
  }
}

/** The sandbox of the calling file's tests: a live binding. */
export let sb: SandboxProcess;

/** The sandbox, started before the calling file's tests and stopped after them. */
export function useConformanceSandbox(): void {
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '3000', '--burst', '1100']);
  });
  afterAll(async () => sb?.stop());
}
