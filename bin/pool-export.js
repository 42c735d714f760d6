#!/usr/bin/env node
// Entry point: runs the TypeScript CLI through tsx, so no build step is needed after `npm ci`. It hands the command
// line the jobs declared in jobs/, the one place that knows both.
import { register } from 'tsx/esm/api';

register();
const { JOBS } = await import('../jobs/index.ts');
const { main } = await import('../src/cli/main.ts');
await main(JOBS);
