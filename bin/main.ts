/** The command line with the jobs of `jobs/`: the one module that knows both (nothing under `src/` imports `jobs/`). */
import { JOBS } from '../jobs/index.ts';
import { main } from '../src/cli/main.ts';

await main(JOBS);
