import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseChain } from '../../src/config/chains.ts';
import { loadConfig } from '../../src/config/config.ts';
import { UsageError } from '../../src/errors.ts';

const file = (content: string) => {
  const p = join(mkdtempSync(join(tmpdir(), 'pe-cfg-')), 'c.json');
  writeFileSync(p, content);
  return p;
};

describe('config', () => {
  it('uses the real service by default, then the file, then the environment', () => {
    const c = loadConfig({ env: {}, configFile: file('{"concurrency": 2, "chains": ["bsc", 137]}') });
    expect(c.baseUrl).toBe('https://api.dodoex.io');
    expect([c.concurrency, c.chains]).toEqual([2, [56, 137]]);
    const e = loadConfig({ env: { POOL_EXPORT_BASE_URL: 'http://127.0.0.1:9/', POOL_EXPORT_API_KEY: 'k' } });
    expect([e.baseUrl, e.apiKey]).toEqual(['http://127.0.0.1:9', 'k']);
    expect(Object.isFrozen(e)).toBe(true);
  });

  it.each([
    ['{"concurrency": 0}', /concurrency must be a whole number of at least 1/],
    ['{"pageSize": 5000}', /pageSize must be at most 1000/],
    ['{"chainz": []}', /unknown key "chainz"; valid keys: .*chains/],
    ['{"chains": ["mars"]}', /unknown chain "mars"; use a chain id or one of: ethereum, bsc/],
    ['{"baseUrl": "ftp://x"}', /baseUrl .* must be an http\(s\) URL/],
    ['{"routes": {"56/dodoex": {"kind": "gateway"}}}', /route "56\/dodoex" must be/],
    ['{not json', /is not valid JSON/],
    [
      '{"maxAnswerBytes": "lots"}',
      /maxAnswerBytes must be a size of at least 1 MiB, such as 64MiB or 67108864, not "lots"/,
    ],
    ['{"maxAnswerBytes": 1000}', /maxAnswerBytes must be a size of at least 1 MiB/],
    ['{"maxAnswerBytes": "2 parsecs"}', /maxAnswerBytes must be a size/],
  ])('rejects %s with an error naming the fix', (content, message) => {
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(message);
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(UsageError);
  });

  it('reads the answer budget as bytes or a size with its unit, 48 MiB by default', () => {
    const budget = (v: unknown) =>
      loadConfig({ env: {}, configFile: file(JSON.stringify({ maxAnswerBytes: v })) }).maxAnswerBytes;
    expect(loadConfig({ env: {} }).maxAnswerBytes).toBe(48 * 1048576);
    expect([budget(2097152), budget('16MiB'), budget('16 mib'), budget('100MB'), budget('1.5GiB')]).toEqual([
      2097152, 16777216, 16777216, 100_000_000, 1610612736,
    ]);
  });

  it('parses chain names and ids', () => {
    expect([parseChain('Ethereum'), parseChain('56'), parseChain('8453')]).toEqual([1, 56, 8453]);
  });
});
