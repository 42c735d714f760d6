/** The command line with the jobs of `jobs/`: the one module that knows both (nothing under `src/` imports `jobs/`). */
import { main } from '../src/cli/main.ts';

await main(async () => (await import('../jobs/index.ts')).JOBS);
