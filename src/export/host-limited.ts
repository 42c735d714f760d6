/** A source that waits for its host's place for every request a batch does not hold (`first-pages.ts`). */
import type { Answer, Endpoint } from '../upstream/client.ts';
import type { FirstPages } from './first-pages.ts';
import type { PageSource, Presence, PresenceAt } from './seams.ts';

/**
 * A source whose every request waits for a place under `limit` (its host's), for a task that runs outside its host's
 * task limit because a batch holds all it is expected to read (see `FirstPages.holdsShort`).
 */
export class HostLimited implements PageSource {
  constructor(
    private readonly source: FirstPages,
    private readonly limit: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {}

  request<T>(endpoint: Endpoint, query: string, vars: Record<string, unknown>): Promise<Answer<T>> {
    return this.limit(() => this.source.request<T>(endpoint, query, vars));
  }

  requestBody(
    endpoint: Endpoint,
    query: string,
    vars: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number; requests?: number }> {
    // A page the batch holds is no request: it takes no place.
    if (this.source.holds(endpoint, query, vars)) return this.source.requestBody(endpoint, query, vars);
    return this.limit(() => this.source.requestBody(endpoint, query, vars));
  }

  answerData<T>(endpoint: Endpoint, body: Uint8Array): T {
    return this.source.answerData<T>(endpoint, body);
  }

  knownPresence(at: PresenceAt): Presence | undefined {
    return this.source.knownPresence(at);
  }
}
