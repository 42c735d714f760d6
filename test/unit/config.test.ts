import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { parseChain } from '../../src/config/chains.ts';
import { LIST_POOL_TYPES, loadConfig } from '../../src/config/config.ts';
import { UsageError } from '../../src/errors.ts';
import { routesFor } from '../../src/upstream/routes.ts';

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

  it('reads the key from POOL_EXPORT_API_KEY_FILE (a mounted secret), without its final line break', () => {
    const key = (content: string) => loadConfig({ env: { POOL_EXPORT_API_KEY_FILE: file(content) } });
    expect(key('5a4db0c5e1f0d1e2\n').apiKey).toBe('5a4db0c5e1f0d1e2');
    expect(key('5a4db0c5e1f0d1e2\r\n').apiKey).toBe('5a4db0c5e1f0d1e2');
    expect(key('5a4db0c5e1f0d1e2').apiKey).toBe('5a4db0c5e1f0d1e2');
    // It is a secret like the key from the environment: removed from every message.
    expect(key('5a4db0c5e1f0d1e2\n').secrets).toEqual(['5a4db0c5e1f0d1e2']);
  });

  it.each([
    [
      { POOL_EXPORT_API_KEY_FILE: '/nonexistent/key' },
      /POOL_EXPORT_API_KEY_FILE names \/nonexistent\/key, which cannot be read \(ENOENT\); point it at the file that holds the key/,
    ],
    [
      { POOL_EXPORT_API_KEY_FILE: file('') },
      /POOL_EXPORT_API_KEY_FILE names .*, which is empty; write the key into it/,
    ],
    [
      { POOL_EXPORT_API_KEY_FILE: file('k\n'), POOL_EXPORT_API_KEY: 'k' },
      /both POOL_EXPORT_API_KEY and POOL_EXPORT_API_KEY_FILE are set; set one/,
    ],
    [
      { POOL_EXPORT_API_KEY_FILE: file('two words\n') },
      /^the key in .* \(POOL_EXPORT_API_KEY_FILE\) holds spaces or control characters/,
    ],
  ])('refuses a key file that cannot serve: %j', (env, message) => {
    expect(() => loadConfig({ env })).toThrow(UsageError);
    expect(() => loadConfig({ env })).toThrow(message);
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

/** Every rule of the config file, each with its whole message written out here (and a value just inside it accepted). */
describe('config rules, one by one', () => {
  const cfg = (o: Record<string, unknown>) => loadConfig({ env: {}, configFile: file(JSON.stringify(o)) });
  const USDT = '0x55d398326f99059ff775485246999027b3197955';
  const TOKENS_EXAMPLE = `{"56": ["${USDT}"]}`;
  const SCHEMAS = 'dodoex, token, mine';
  const ROUTES_EXAMPLE =
    'config "routes" must be an object like {"56/dodoex": [{"kind": "self"}, {"kind": "gateway", "subgraphId": "…", "apiKey": "…"}]}';
  const ROUTE_SHAPE =
    'must be {"kind": "self"} (optionally with "baseUrl" and "apiKey") or {"kind": "gateway", "subgraphId": "<id>"} (optionally with "gatewayUrl" and "apiKey")';

  it.each<[Record<string, unknown>, string]>([
    [{ routes: [] }, ROUTES_EXAMPLE],
    [{ routes: null }, ROUTES_EXAMPLE],
    [{ routes: 'x' }, ROUTES_EXAMPLE],
    [
      { routes: { '56/nft': { kind: 'self' } } },
      `config route key "56/nft" must be <chainId>/<schema> with schema ${SCHEMAS}`,
    ],
    [
      { routes: { 'x56/dodoex': { kind: 'self' } } },
      `config route key "x56/dodoex" must be <chainId>/<schema> with schema ${SCHEMAS}`,
    ],
    [
      { routes: { '56/dodoex/x': { kind: 'self' } } },
      `config route key "56/dodoex/x" must be <chainId>/<schema> with schema ${SCHEMAS}`,
    ],
    [{ routes: { '56/dodoex': { kind: 'gateway', subgraphId: '' } } }, `config route "56/dodoex" ${ROUTE_SHAPE}`],
    [{ routes: { '56/dodoex': { kind: 'gateway', subgraphId: 7 } } }, `config route "56/dodoex" ${ROUTE_SHAPE}`],
    [{ routes: { '56/dodoex': { kind: 'hosted', subgraphId: 'a' } } }, `config route "56/dodoex" ${ROUTE_SHAPE}`],
    [
      { routes: { '56/dodoex': [{ kind: 'self' }, { kind: 'gateway', subgraphId: 'a', apikey: 'k' }] } },
      `config route "56/dodoex"[1] ${ROUTE_SHAPE}; "apikey" is not a field of it`,
    ],
    [{ routes: { '56/dodoex': [{ kind: 'self' }, 'gateway'] } }, `config route "56/dodoex"[1] ${ROUTE_SHAPE}`],
    [{ routes: { '56/dodoex': [{ kind: 'self' }, null] } }, `config route "56/dodoex"[1] ${ROUTE_SHAPE}`],
    [{ routes: { '56/dodoex': [{ kind: 'self' }, ['self']] } }, `config route "56/dodoex"[1] ${ROUTE_SHAPE}`],
    [
      { routes: { '56/dodoex': [] } },
      `config route "56/dodoex" is an empty list: name at least one route, as in ${ROUTES_EXAMPLE.slice(39)}`,
    ],
    [
      { routes: { '56/dodoex': { kind: 'self', apiKey: 'a b' } } },
      'config route "56/dodoex".apiKey must be a key without spaces or control characters',
    ],
    [
      { routes: { '56/dodoex': { kind: 'gateway', subgraphId: 'a', apiKey: 1234 } } },
      'config route "56/dodoex".apiKey must be a key without spaces or control characters',
    ],
    [
      { routes: { '56/dodoex': [{ kind: 'gateway', subgraphId: 'a', gatewayUrl: 'gateway.example' }] } },
      'route "56/dodoex"[0].gatewayUrl must be an http(s) URL such as https://api.dodoex.io, not "gateway.example"',
    ],
    [
      { routes: { '56/dodoex': [{ kind: 'self', baseUrl: 'ftp://x' }] } },
      'route "56/dodoex"[0].baseUrl must be an http(s) URL such as https://api.dodoex.io, not "ftp://x"',
    ],
    [{ routeChoice: 'fastest' }, 'routeChoice must be "first-healthy" or "freshest", not "fastest"'],
    [{ maxLagBlocks: -1 }, 'maxLagBlocks must be a whole number, not -1'],
    [{ schemaNames: [] }, 'config "schemaNames" must be an object like {"mine": "mine-v3"}'],
    [{ schemaNames: null }, 'config "schemaNames" must be an object like {"mine": "mine-v3"}'],
    [{ schemaNames: 'mine' }, 'config "schemaNames" must be an object like {"mine": "mine-v3"}'],
    [{ schemaNames: { nft: 'nft' } }, `config schemaNames key "nft" is not a schema; valid: ${SCHEMAS}`],
    [
      { schemaNames: { mine: 'mine v3' } },
      'config schemaNames.mine must be a schema name such as "mine", not "mine v3"',
    ],
    [{ schemaNames: { mine: 3 } }, 'config schemaNames.mine must be a schema name such as "mine", not 3'],
    [{ schemaNames: { mine: 'x/../y' } }, 'config schemaNames.mine must be a schema name such as "mine", not "x/../y"'],
    [{ trustedTokens: [] }, `config "trustedTokens" must map chain ids to token addresses, like ${TOKENS_EXAMPLE}`],
    [{ trustedTokens: null }, `config "trustedTokens" must map chain ids to token addresses, like ${TOKENS_EXAMPLE}`],
    [{ trustedTokens: { bsc: [USDT] } }, 'config trustedTokens key "bsc" must be a chain id such as 56'],
    [{ trustedTokens: { '56x': [USDT] } }, 'config trustedTokens key "56x" must be a chain id such as 56'],
    [
      { trustedTokens: { '56': USDT } },
      `config trustedTokens["56"] must be a list of token addresses (0x and 40 hex digits), like ${TOKENS_EXAMPLE}`,
    ],
    [
      { trustedTokens: { '56': [USDT, `${USDT}0`] } },
      `config trustedTokens["56"] must be a list of token addresses (0x and 40 hex digits), like ${TOKENS_EXAMPLE}`,
    ],
    [
      { trustedTokens: { '56': [`x${USDT}`] } },
      `config trustedTokens["56"] must be a list of token addresses (0x and 40 hex digits), like ${TOKENS_EXAMPLE}`,
    ],
    [
      { trustedTokens: { '56': [5] } },
      `config trustedTokens["56"] must be a list of token addresses (0x and 40 hex digits), like ${TOKENS_EXAMPLE}`,
    ],
    [
      { listPoolTypes: [] },
      `config "listPoolTypes" must be a non-empty list of pool types such as ${JSON.stringify(LIST_POOL_TYPES)}`,
    ],
    [
      { listPoolTypes: 'DVM' },
      `config "listPoolTypes" must be a non-empty list of pool types such as ${JSON.stringify(LIST_POOL_TYPES)}`,
    ],
    [
      { listPoolTypes: ['DVM', 'dsp'] },
      `config "listPoolTypes" must be a non-empty list of pool types such as ${JSON.stringify(LIST_POOL_TYPES)}`,
    ],
    [
      { listPoolTypes: ['DVM', 'X DSP'] },
      `config "listPoolTypes" must be a non-empty list of pool types such as ${JSON.stringify(LIST_POOL_TYPES)}`,
    ],
    [{ minTrackedLiquidityUsd: -1 }, 'minTrackedLiquidityUsd must be a number of USD from 0, such as 50000, not -1'],
    [{ minTrackedLiquidityUsd: '5' }, 'minTrackedLiquidityUsd must be a number of USD from 0, such as 50000, not "5"'],
    [{ maxAnswerBytes: true }, 'maxAnswerBytes must be a size of at least 1 MiB, such as 64MiB or 67108864, not true'],
    [
      { maxAnswerBytes: 1048575 },
      'maxAnswerBytes must be a size of at least 1 MiB, such as 64MiB or 67108864, not 1048575',
    ],
    [
      { maxAnswerBytes: 'x64MiB' },
      'maxAnswerBytes must be a size of at least 1 MiB, such as 64MiB or 67108864, not "x64MiB"',
    ],
    [
      { maxAnswerBytes: '64MiB x' },
      'maxAnswerBytes must be a size of at least 1 MiB, such as 64MiB or 67108864, not "64MiB x"',
    ],
    [{ dataDir: 5 }, 'dataDir must be a string'],
    [{ confirmations: -1 }, 'confirmations must be a whole number, not -1'],
    [{ reorgWindowSecs: 1.5 }, 'reorgWindowSecs must be a whole number, not 1.5'],
    [{ shards: 0 }, 'shards must be a whole number of at least 1, not 0'],
    [{ shards: 65 }, 'shards must be at most 64, not 65'],
    [{ pageSize: 1001 }, "pageSize must be at most 1000 (graph-node's limit), not 1001"],
    [{ duckdbMemoryLimit: '256' }, 'duckdbMemoryLimit must be a size such as 256MB or 1GB, "auto" or "", not "256"'],
    [
      { duckdbMemoryLimit: 'x256MB' },
      'duckdbMemoryLimit must be a size such as 256MB or 1GB, "auto" or "", not "x256MB"',
    ],
    [
      { duckdbMemoryLimit: '256MB x' },
      'duckdbMemoryLimit must be a size such as 256MB or 1GB, "auto" or "", not "256MB x"',
    ],
    [{ duckdbMemoryLimit: '2.MB' }, 'duckdbMemoryLimit must be a size such as 256MB or 1GB, "auto" or "", not "2.MB"'],
    [{ chains: [] }, 'chains must be a non-empty list of chain names or ids'],
    [{ chains: 'bsc' }, 'chains must be a non-empty list of chain names or ids'],
    [
      { apiKey: 'ab cd' },
      'POOL_EXPORT_API_KEY holds spaces or control characters; copy the key again from the developer platform',
    ],
    [
      { apiKey: 'abcd\u0007' },
      'POOL_EXPORT_API_KEY holds spaces or control characters; copy the key again from the developer platform',
    ],
    [
      { gatewayUrl: 'file:///x' },
      'gatewayUrl (POOL_EXPORT_GATEWAY_URL) must be an http(s) URL such as https://api.dodoex.io, not "file:///x"',
    ],
  ])('refuses %j: %s', (o, message) => {
    let err: unknown;
    try {
      cfg(o);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(message);
  });

  it('accepts the values at the edges of each rule, as written', () => {
    const c = cfg({
      routes: {
        '56/dodoex': { kind: 'gateway', subgraphId: 'Qm1' },
        '137/mine': { kind: 'self' },
        '1/exchange': [
          { kind: 'self', baseUrl: 'http://127.0.0.1:9/', apiKey: 'k2' },
          { kind: 'gateway', subgraphId: 'Qm2', gatewayUrl: 'http://127.0.0.1:8', apiKey: 'k3' },
        ],
      },
      routeChoice: 'freshest',
      maxLagBlocks: 0,
      schemaNames: { mine: 'mine-v3_2' },
      trustedTokens: { '56': [USDT.toUpperCase().replace('0X', '0x')] },
      listPoolTypes: ['DVM', 'AMMV3'],
      minTrackedLiquidityUsd: 0,
      maxAnswerBytes: ' 1 MiB ',
      confirmations: 0,
      reorgWindowSecs: 0,
      shards: 64,
      pageSize: 1000,
      duckdbMemoryLimit: '1.5 GiB',
      apiKey: '!~',
      baseUrl: 'http://127.0.0.1:9///',
      dataDir: 'rel/dir',
    });
    // One route or a list; schema aliases canonical; URLs without their trailing slash.
    expect(c.routes).toEqual({
      '56/dodoex': [{ kind: 'gateway', subgraphId: 'Qm1' }],
      '137/mine': [{ kind: 'self' }],
      '1/dodoex': [
        { kind: 'self', baseUrl: 'http://127.0.0.1:9', apiKey: 'k2' },
        { kind: 'gateway', subgraphId: 'Qm2', gatewayUrl: 'http://127.0.0.1:8', apiKey: 'k3' },
      ],
    });
    expect([c.routeChoice, c.maxLagBlocks]).toEqual(['freshest', 0]);
    // Every key is known, to be kept out of messages.
    expect(c.secrets).toEqual(['!~', 'k2', 'k3']);
    expect(c.schemaNames).toEqual({ dodoex: 'dodoex', token: 'token', mine: 'mine-v3_2' });
    expect(c.trustedTokens).toEqual({ '56': [USDT] });
    expect(c.listPoolTypes).toEqual(['DVM', 'AMMV3']);
    expect([c.minTrackedLiquidityUsd, c.maxAnswerBytes, c.confirmations, c.reorgWindowSecs]).toEqual([
      0, 1048576, 0, 0,
    ]);
    expect([c.shards, c.pageSize, c.duckdbMemoryLimit, c.apiKey]).toEqual([64, 1000, '1.5 GiB', '!~']);
    expect(c.baseUrl).toBe('http://127.0.0.1:9');
    expect(c.dataDir).toBe(join(process.cwd(), 'rel/dir'));
    expect(cfg({ duckdbMemoryLimit: '' }).duckdbMemoryLimit).toBe('');
    // Defaults: DuckDB's memory by `auto` (on a host of 8 GiB without a limit, a quarter of it), and no routes, trusted
    // tokens or renamed schemas of one's own.
    const d = loadConfig({ env: { POOL_EXPORT_HOST_FILES: 'test/fixtures/hosts/no-limit-8gib' } });
    expect([d.duckdbMemoryLimit, d.routes, d.trustedTokens]).toEqual(['2048MiB', {}, {}]);
    expect([d.routeChoice, d.maxLagBlocks, d.secrets]).toEqual(['first-healthy', 50, []]);
  });

  it('takes the environment over the file, an empty variable being no value, and overrides over both', () => {
    const f = file(JSON.stringify({ developerId: 'from-file', concurrency: 3 }));
    expect(loadConfig({ env: { POOL_EXPORT_DEVELOPER_ID: '' }, configFile: f }).developerId).toBe('from-file');
    expect(loadConfig({ env: { POOL_EXPORT_DEVELOPER_ID: 'env' }, configFile: f }).developerId).toBe('env');
    const o = loadConfig({ env: {}, configFile: f, overrides: { concurrency: 7, developerId: undefined } });
    expect([o.concurrency, o.developerId]).toEqual([7, 'from-file']);
  });

  it('names a config file that is missing, or holds no object', () => {
    expect(() => loadConfig({ env: {}, configFile: '/nonexistent/pe.json' })).toThrow(
      'config file /nonexistent/pe.json does not exist; pass --config with a JSON file, or leave it out',
    );
    for (const content of ['[]', 'null', '"x"', '5']) {
      const f = file(content);
      expect(() => loadConfig({ env: {}, configFile: f })).toThrow(`config file ${f} must hold a JSON object`);
    }
  });
});

describe('subgraphs in the config file', () => {
  const schema = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
  const dataDir = () => mkdtempSync(join(tmpdir(), 'pe-cfg-data-'));
  const load = (subgraphs: unknown) =>
    loadConfig({ env: { POOL_EXPORT_DATA_DIR: dataDir() }, configFile: file(JSON.stringify({ subgraphs })) });

  it("registers a subgraph's datasets and keeps a gateway key in its URL out of every message and label", () => {
    const url = 'https://gateway.example/api/0123456789abcdef0123456789abcdef/subgraphs/id/QmAbc';
    const c = load({ pools: { deployments: { bsc: url, 1: 'http://127.0.0.1:8000/subgraphs/name/pools' }, schema } });
    expect(c.subgraphs.map((s) => [s.name, s.deployments])).toEqual([
      [
        'pools',
        [
          { chainId: 1, url: 'http://127.0.0.1:8000/subgraphs/name/pools' },
          { chainId: 56, url },
        ],
      ],
    ]);
    expect(c.secrets).toContain('0123456789abcdef0123456789abcdef');
    const swaps = DATASETS.find((d) => d.name === 'pools.swaps')!;
    const [route] = routesFor(c, swaps, 56);
    expect(route!.url).toBe(url);
    expect(route!.label).toBe('https://gateway.example/api/***/subgraphs/id/QmAbc');
    // DODO's datasets keep their routes.
    expect(routesFor(c, DATASETS.find((d) => d.name === 'dodoex.swaps')!, 56)[0]!.url).toContain('/subgraph/graphql?');
  });

  it.each([
    [
      { 'Bad-Name': { deployments: { bsc: 'http://x' }, schema } },
      /subgraph name "Bad-Name": a subgraph name starts with a lowercase letter .*: e\.g\. bad_name/,
    ],
    [
      { dodoex: { deployments: { bsc: 'http://x' }, schema } },
      /subgraph name "dodoex" is taken: it is DODO's data; choose another, such as dodoex_sg/,
    ],
    [{ pools: { deployments: { mars: 'http://x' }, schema } }, /unknown chain "mars"/],
    [
      { pools: { deployments: { bsc: 'ftp://x' }, schema } },
      /config subgraphs\.pools\.deployments\.bsc must be an http\(s\) URL/,
    ],
    [
      { pools: { deployments: { bsc: 'http://x' }, schema: '/nope.graphql' } },
      /config subgraphs\.pools\.schema: cannot read \/nope\.graphql/,
    ],
    [{ pools: { deployments: {}, schema } }, /config subgraphs\.pools names no deployment/],
    [{ pools: { deployments: { bsc: 'http://x' }, schema, entities: ['Nope'] } }, /subgraph pools has no entity Nope/],
    [{ pools: 'http://x' }, /config subgraphs\.pools must be an object like/],
  ])('refuses %j with a message that names the fix', (subgraphs, message) => {
    expect(() => load(subgraphs)).toThrow(UsageError);
    expect(() => load(subgraphs)).toThrow(message);
  });
});
