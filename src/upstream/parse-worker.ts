/**
 * The parse worker: reads a deployment's manifest, or checks a subgraph's schema, on a thread of its own, so that a
 * hostile file (8 MB of `[`, a mapping of 500,000 keys) costs the worker's bounds, never the command's memory or its
 * event loop, which then still answers SIGTERM (`bounded-parse.ts`). Its answer is one message: what it read, or why not.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseManifest } from './manifest.ts';
import { checkSchemaText } from './schema-check.ts';

/** What the worker is asked. */
export type ParseRequest =
  | { readonly kind: 'manifest'; readonly text: string; readonly hash: string }
  | { readonly kind: 'schema'; readonly text: string; readonly name: string };

/** Its answer: the manifest's schema link and networks, a schema found sound, or the error's message. */
export type ParseReply =
  | {
      readonly ok:
        | { readonly schemaHash: string; readonly networks: readonly string[]; readonly history?: number }
        | true;
    }
  | { readonly error: string; readonly usage: boolean };

const request = workerData as ParseRequest;
let reply: ParseReply;
try {
  reply = { ok: request.kind === 'manifest' ? parseManifest(request.text, request.hash) : checkSchemaText(request) };
} catch (e) {
  reply = { error: (e as Error).message, usage: (e as Error).name === 'UsageError' };
}
parentPort!.postMessage(reply);
