/**
 * A subgraph's schema from its deployment's own files on IPFS (src/upstream/deployment-source.ts): `subgraph add`
 * without `--schema` against the sandbox's IPFS node takes the schema file byte for byte, with what introspection
 * cannot see (immutable entities, a timeseries, an aggregation and its intervals); a deployment of another network,
 * an IPFS endpoint named by --ipfs that does not answer, and a file that is not a manifest are each one line and exit
 * code 2, with nothing stored.
 */
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.ts';
import { manifestText } from '../../src/sandbox/ipfs.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { parseSchemaModel } from '../../src/schemas/entity-model.ts';
import { parseManifest } from '../../src/upstream/manifest.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
let sb: SandboxProcess;
let dir: string;
let url: (chain: string) => string;
/** An HTTP server that answers every IPFS `cat` with a YAML file that is no manifest. */
let notIpfs: Server;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '500', '--chains', '1,56,8453', '--subgraph', `pools=${FIXTURE}`]);
  url = (chain) => new RegExp(`^subgraph pools: (\\S+/${chain})$`, 'm').exec(sb.banner)![1]!;
  dir = mkdtempSync(join(tmpdir(), 'pe-deployment-'));
  notIpfs = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello: world\n'));
  notIpfs.listen(0, '127.0.0.1');
  await once(notIpfs, 'listening');
});
afterAll(async () => {
  await sb?.stop();
  notIpfs?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a manifest', () => {
  const schemaHash = 'QmSchema1234';
  const manifest = manifestText({
    name: 'pools',
    chainId: 137,
    model: parseSchemaModel('p', readFileSync(FIXTURE, 'utf8')),
    schemaHash,
  });

  it('gives its schema link and its networks', () => {
    expect(parseManifest(manifest, 'QmM')).toEqual({ schemaHash, networks: ['matic'] });
    const templated = `${manifest}templates:\n  - kind: ethereum\n    name: Pool\n    network: matic\n  - name: Other\n    network: base\n`;
    expect(parseManifest(templated, 'QmM').networks).toEqual(['matic', 'base']);
  });

  it.each([
    ['YAML that is no manifest', 'hello: world\n', 'it has no schema.file link'],
    [
      'a manifest naming no network',
      'schema:\n  file:\n    /: /ipfs/QmS\ndataSources: []\n',
      'it has no data source naming a network',
    ],
  ])('refuses %s, naming the hash', (_, text, why) => {
    expect(() => parseManifest(text, 'QmBad')).toThrow(
      new UsageError(
        `QmBad is not a subgraph manifest (${why}): the endpoint's _meta { deployment } should name a deployment published by graph deploy`,
      ),
    );
  });

  it('names the real cause of a text that is not one: YAML that does not parse, where; an HTML page', () => {
    expect(() => parseManifest('a: [b\n  c: }', 'QmBad')).toThrow(
      /^QmBad is not a subgraph manifest: it is not YAML \(.+ at line 1, column 5:\); the endpoint's _meta/,
    );
    expect(() => parseManifest('<!DOCTYPE html>\n<html><body>Not found</body></html>', 'QmBad')).toThrow(
      /^QmBad is an HTML page, not a subgraph manifest: is the IPFS endpoint \(--ipfs\) an IPFS API/,
    );
  });
});

describe('subgraph add from the deployment itself', () => {
  it('takes the schema file as the deployment holds it, with its immutable entities, timeseries and aggregation', async () => {
    const data = join(dir, 'own');
    const env = sandboxEnv(sb, data);
    const added = await cli(
      [
        'subgraph',
        'add',
        'pools',
        '--chain',
        'ethereum',
        '--url',
        url('ethereum'),
        '--chain',
        'bsc',
        '--url',
        url('bsc'),
      ],
      env,
    );
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      'added subgraph pools: 8 entities (Factory, Token, Pool, Swap, Mint, PriceTick, Account, TokenPriceStat), 9 datasets',
    );
    const stored = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')).subgraphs[0].schema;
    expect(stored).toBe(readFileSync(FIXTURE, 'utf8'));
  });

  it("takes any EVM chain of The Graph's networks registry by its id or an alias, checked against the manifest", async () => {
    const data = join(dir, 'registry');
    const env = sandboxEnv(sb, data);
    // `mainnet` is the registry's id of ethereum; `base` (8453) is not one of DODO's chains.
    const added = await cli(
      [
        'subgraph',
        'add',
        'pools',
        '--chain',
        'mainnet',
        '--url',
        url('ethereum'),
        '--chain',
        'base',
        '--url',
        url('chain-8453'),
      ],
      env,
    );
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /^ {2}base: http:\/\/127\.0\.0\.1:\d+\/subgraphs\/name\/pools\/chain-8453 \(block \d+\)$/m,
    );
    expect(added.stdout).toMatch(/^ {2}ethereum: /m);
    const folder = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')).subgraphs[0];
    expect(folder.deployments.map((d: { chainId: number }) => d.chainId)).toEqual([1, 8453]);
    // Its lake folder is the chain's id, which no registry version renames; status names it by the registry.
    const run = await cli(['run', '--subgraphs', 'pools', '--datasets', 'pools.swaps'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(data, 'lake', 'pools', 'swaps', 'chain=8453'))).toBe(true);
    const status = JSON.parse((await cli(['status', '--json', '--chain', 'evm-8453'], env)).stdout);
    expect(status.datasets.map((e: { chain: string }) => e.chain)).toContain('base');
  });

  it.each([
    [
      "a deployment of a chain outside DODO's, given for another",
      () => ['--chain', 'polygon', '--url', url('chain-8453')],
      /^pool-export: --chain polygon with http:\/\/127\.0\.0\.1:\d+\/subgraphs\/name\/pools\/chain-8453: its deployment Qm\w+ indexes base \(chain 8453\), not matic \(chain 137\); give --chain base$/,
    ],
    [
      'an unknown chain name',
      () => ['--chain', 'etherum', '--url', url('ethereum')],
      /^pool-export: unknown chain "etherum"; use a chain id or one of: ethereum, bsc, .*networks registry 0\.7\.\d+ \(mainnet, matic, base, arbitrum-one, …\); did you mean ethereum\?$/,
    ],
    [
      'a network of the registry that is not an EVM chain',
      () => ['--chain', 'eos', '--url', url('ethereum')],
      /^pool-export: chain "eos" is eos, which is not an EVM chain: pool-export reads chains by their EVM chain id$/,
    ],
    [
      'a deployment of another network',
      () => ['--chain', 'bsc', '--url', url('ethereum')],
      /^pool-export: --chain bsc with http:\/\/127\.0\.0\.1:\d+\/subgraphs\/name\/pools\/ethereum: its deployment Qm\w+ indexes mainnet \(chain 1\), not bsc \(chain 56\); give --chain ethereum$/,
    ],
    [
      'an IPFS endpoint named by --ipfs that does not answer',
      () => ['--chain', 'ethereum', '--url', url('ethereum'), '--ipfs', 'http://127.0.0.1:65534/ipfs'],
      /^pool-export: the IPFS endpoint http:\/\/127\.0\.0\.1:65534\/ipfs could not give Qm\w+ \(connect ECONNREFUSED 127\.0\.0\.1:65534\): check --ipfs, or give --schema FILE$/,
    ],
    [
      'a deployment id whose file is no manifest',
      () => [
        '--chain',
        'ethereum',
        '--url',
        url('ethereum'),
        '--ipfs',
        `http://127.0.0.1:${(notIpfs.address() as AddressInfo).port}/`,
      ],
      /^pool-export: Qm\w+ is not a subgraph manifest \(it has no schema\.file link\)/,
    ],
  ])('refuses %s in one line with exit code 2, and stores nothing', async (_, args, message) => {
    const data = join(dir, `bad-${Math.random()}`);
    const r = await cli(['subgraph', 'add', 'pools', ...args()], sandboxEnv(sb, data));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
    expect(existsSync(join(data, 'subgraphs.json'))).toBe(false);
  });
});
