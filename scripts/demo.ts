/** `make demo`: starts the sandbox, sends the service document's liquidity-list request and its eight query shapes, prints a summary. */
import { LIQUIDITY_LIST_BODY, SEED_QUERIES } from '../src/sandbox/seed-queries.ts';
import { startSandbox } from '../src/sandbox/spawn.ts';

const sandbox = await startSandbox(['--scale', '20000']);
console.log(`sandbox: ${sandbox.url}`);
try {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'dodo-demo' }, body: JSON.stringify(body) });
    return (await res.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] };
  };
  const list = await post(`/graphql?opname=FetchLiquidityList&apikey=${sandbox.apiKey}`, LIQUIDITY_LIST_BODY);
  const info = list.data?.liquidity_list as { totalCount: number; lqList: { id: string; pair: { type: string; tvl: string } }[] };
  console.log(`\nFetchLiquidityList (bsc, CLASSICAL/DVM/DSP): ${info.totalCount} pools; first page:`);
  for (const p of info.lqList) console.log(`  ${p.id} ${p.pair.type.padEnd(9)} tvl ${p.pair.tvl}`);
  const sub = `/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=${sandbox.apiKey}`;
  const pair = info.lqList[0]!.id;
  const users = (await post(sub, { query: '{ users(first: 1) { id } }' })).data!.users as { id: string }[];
  console.log('\nThe eight query shapes of the exchange schema (bsc):');
  for (const [purpose, q] of Object.entries(SEED_QUERIES)) {
    const query = q.replace('$PAIR', pair).replace('$USER', users[0]!.id).replace('$SINCE', String(1_767_225_600 - 7 * 86_400));
    const r = await post(sub, { query });
    if (r.errors) throw new Error(`${purpose}: ${r.errors[0]!.message}`);
    const [root, value] = Object.entries(r.data!)[0]!;
    const n = Array.isArray(value) ? `${value.length} rows` : value ? '1 row' : 'null';
    console.log(`  ${purpose.padEnd(45)} ${root.padEnd(22)} ${n}`);
  }
} finally {
  await sandbox.stop();
}
