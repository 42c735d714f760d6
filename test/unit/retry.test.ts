import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { withRetries } from '../../src/upstream/retry.ts';
import { graphqlError, httpError, redact } from '../../src/upstream/upstream-error.ts';

describe('error classification', () => {
  it.each([
    [httpError(500, 'oops', null), true],
    [httpError(429, '', '3'), true],
    [httpError(401, '{"message":"Invalid API key in request"}', null), false],
    [httpError(404, 'nope', null), false],
    [graphqlError(['Store error: database unavailable'], 200), true],
    [graphqlError(['indexing_error'], 200), true],
    [graphqlError(['bad indexers: {0x1: Timeout}'], 200), true],
    [graphqlError(['Type `Swap` has no field `nope`'], 200), false],
    [graphqlError(['auth error: API key not found'], 200), false],
  ])('%s → retryable %s', (err, retryable) => expect(err.retryable).toBe(retryable));

  it('honours Retry-After', () => expect(httpError(429, '', '3').extra.retryAfterMs).toBe(3000));
  it('redacts the key', () =>
    expect(redact('https://x/?apikey=SECRET&a=SECRET', 'SECRET')).toBe('https://x/?apikey=***&a=***'));
});

describe('withRetries', () => {
  it('retries retryable errors with backoff, then succeeds', async () => {
    const delays: number[] = [];
    let calls = 0;
    const v = await withRetries(
      async () => {
        if (++calls < 3) throw new UpstreamError('flaky', { kind: 'http', retryable: true });
        return 'ok';
      },
      { maxAttempts: 5, sleep: async (ms) => void delays.push(ms), random: () => 0.5 },
    );
    expect([v, calls, delays]).toEqual(['ok', 3, [250, 500]]);
  });

  it('stops at once on a terminal error and after maxAttempts on a retryable one', async () => {
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls++;
          throw new UpstreamError('bad query', { kind: 'graphql', retryable: false });
        },
        { maxAttempts: 5, sleep: async () => {} },
      ),
    ).rejects.toThrow('bad query');
    expect(calls).toBe(1);
    await expect(
      withRetries(
        async () => {
          throw new UpstreamError('down', { kind: 'http', retryable: true });
        },
        { maxAttempts: 3, sleep: async () => {} },
      ),
    ).rejects.toThrow('down (gave up after 3 attempts)');
  });
});
