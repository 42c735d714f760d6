/**
 * Manifests and schemas from outside (IPFS, introspection, a file) parsed within bounds: on a worker thread
 * (`parse-worker.ts`) of at most `PARSE_MIB` of heap, stopped after `PARSE_SECS` or at the first stop request. A
 * manifest is at most `MANIFEST_BYTES`, a schema at most `SCHEMA_BYTES` (`deployment-source.ts` reads them so).
 */
import { UsageError } from '../errors.ts';
import { bytesText } from '../util/http-body.ts';
import { startWorker } from '../util/worker-start.ts';
import type { ParseReply, ParseRequest } from './parse-worker.ts';

/** Bytes a manifest may take: real ones are a few KB (graph-cli writes one data source in about 40 lines). */
export const MANIFEST_BYTES = 1024 ** 2;
/** Bytes a schema may take: the largest real ones are a few hundred KB. */
export const SCHEMA_BYTES = 8 * 1024 ** 2;
/** Seconds one parse may take: a real manifest or schema takes milliseconds. */
export const PARSE_SECS = 20;
/** Heap one parse may take, in MiB: a real one takes a few. */
export const PARSE_MIB = 256;

/** A parse that could not finish: it stopped on request (`stopped`), or met a bound. */
export class ParseStopped extends Error {}

/** What one parse may take: a stop request, and the seconds (`PARSE_SECS` unless given). */
export interface ParseBounds {
  readonly signal?: AbortSignal | undefined;
  readonly secs?: number;
}

/** Runs one parse on the worker: its answer, or the usage error naming what it met. */
async function parse(request: ParseRequest, what: string, bounds: ParseBounds = {}): Promise<ParseReply> {
  const { signal, secs = PARSE_SECS } = bounds;
  if (signal?.aborted) throw new ParseStopped(`stopped on request before reading ${what}`);
  const worker = startWorker(
    { script: new URL('./parse-worker.js', import.meta.url), source: new URL('./parse-worker.ts', import.meta.url) },
    { workerData: request, resourceLimits: { maxOldGenerationSizeMb: PARSE_MIB, stackSizeMb: 4 } },
  );
  return new Promise<ParseReply>((resolve, reject) => {
    let done = false;
    const end = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      void worker.terminate();
      settle();
    };
    const stop = () => end(() => reject(new ParseStopped(`stopped on request while reading ${what}`)));
    const timer = setTimeout(
      () => end(() => reject(new UsageError(`${what} takes more than ${secs} s to read: it is no subgraph's file`))),
      secs * 1000,
    );
    signal?.addEventListener('abort', stop, { once: true });
    worker.once('message', (reply: ParseReply) => end(() => resolve(reply)));
    worker.once('error', (e: Error & { code?: string }) =>
      end(() =>
        reject(
          e.code === 'ERR_WORKER_OUT_OF_MEMORY' || e instanceof RangeError
            ? new UsageError(
                `${what} takes more than ${PARSE_MIB} MiB${e instanceof RangeError ? ' of nesting' : ''} to read: it is no subgraph's file`,
              )
            : e,
        ),
      ),
    );
    worker.once('exit', (code) => end(() => reject(new Error(`the parse of ${what} ended with code ${code}`))));
  });
}

/** The reply's result, or its error thrown as it was (a usage error naming the fault, after `prefix`). */
function result<T>(reply: ParseReply, prefix = ''): T {
  if ('ok' in reply) return reply.ok as T;
  throw reply.usage ? new UsageError(`${prefix}${reply.error}`) : new Error(reply.error);
}

/** A deployment's manifest: its schema's hash and its networks (`manifest.ts`), read within bounds. */
export async function parseManifestBounded(
  text: string,
  hash: string,
  bounds: ParseBounds = {},
): Promise<{ schemaHash: string; networks: string[]; history?: number }> {
  return result(await parse({ kind: 'manifest', text, hash }, `the manifest ${hash}`, bounds));
}

/**
 * Checks a schema's text as `subgraph add` takes it (`schema-check.ts`), within bounds: a usage error that starts with
 * `what` (`--schema FILE`, `the schema of Qm…`) where it is refused.
 */
export async function checkSchemaBounded(schema: {
  readonly name: string;
  readonly text: string;
  readonly what: string;
  readonly signal?: AbortSignal | undefined;
}): Promise<void> {
  const { name, text, what, signal } = schema;
  if (Buffer.byteLength(text) > SCHEMA_BYTES)
    throw new UsageError(`${what} is larger than ${bytesText(SCHEMA_BYTES)}: it is no subgraph's schema`);
  result(await parse({ kind: 'schema', text, name }, what, { signal }), `${what}: `);
}
