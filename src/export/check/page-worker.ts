/**
 * The page worker: a thread that checks page answers and keeps their rows (see `page-check.ts`), so that parsing
 * megabytes of JSON never holds up the main thread, which sends requests and drives DuckDB. Started by
 * `WorkerPageChecker`; answers each message with its id.
 */
import { parentPort } from 'node:worker_threads';
import type { Dataset } from '../../catalog/catalog.ts';
import { GarbageError } from '../../errors.ts';
import { checkPageAnswer } from './page-check.ts';
import type { CheckReply, CheckRequest } from './page-check-runner.ts';

/** Datasets by name, as the main thread sent them once. */
const datasets = new Map<string, Dataset>();

parentPort!.on('message', (m: CheckRequest) => {
  let reply: CheckReply;
  try {
    if (m.ds) datasets.set(m.ds.name, m.ds);
    const ds = datasets.get(m.dataset);
    if (!ds) throw new Error(`the page worker was not given dataset ${m.dataset}`);
    const page = checkPageAnswer({ ds, chainId: m.chainId, body: new Uint8Array(m.body), file: m.file });
    if (!page) {
      // Not a page of rows alone: the body goes back, for the main thread to judge as any answer.
      parentPort!.postMessage({ id: m.id, body: m.body } satisfies CheckReply, [m.body]);
      return;
    }
    reply = { id: m.id, page };
  } catch (e) {
    reply =
      e instanceof GarbageError
        ? { id: m.id, garbage: { at: e.at, detail: e.detail, hint: e.hint } }
        : { id: m.id, error: String((e as Error).message ?? e) };
  }
  parentPort!.postMessage(reply);
});
