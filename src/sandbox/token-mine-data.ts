/** Generated tables of the `token` and `mine` schemas for one chain. */

import type { SchemaModel } from '../schemas/entity-model.ts';
import { hexOf, pick } from './hash.ts';
import { materializedTable, type Row, type Table } from './table.ts';
import { emptyTable } from './table-kinds.ts';
import type { World } from './world.ts';
import { TAG } from './world-entities.ts';

/** Builds every table of the `token` schema: ERC20s created through the exchange's factories. */
export function tokenTables(model: SchemaModel, w: World): Map<string, Table> {
  const E = (n: string) => model.byName.get(n)!;
  const { seed } = w.opts;
  const c = w.chainId;
  const ts = (b: number) => String(w.tl.ts(b));
  const count = (at: number) => w.createdCount(w.every.token * 2, at);
  const created = (k: number) => w.createdBlock(w.every.token * 2, k);
  const creator = (k: number) => w.userId(pick(w.userCount(created(k)), seed, c, TAG.erc20, k, 1));
  const tables = new Map<string, Table>();
  const put = (t: Table) => tables.set(t.entity.name, t);
  put(
    materializedTable(E('DodoToken'), (v) => [
      {
        id: 'DODO-Token',
        tokens: String(count(v.at)),
        updatedAt: ts(count(v.at) ? created(count(v.at) - 1) : v.at),
        __block: v.at,
      },
    ]),
  );
  put(
    materializedTable(E('Token'), (v) =>
      Array.from({ length: count(v.at) }, (_, k): Row => {
        const decimals = [18, 6, 0, 9][k % 4]!;
        return {
          id: hexOf(5, seed, c, TAG.erc20, k),
          symbol: k === 1 ? `"'; SELECT 1;--` : `ERC${k}`,
          name: k === 2 ? 'Emoji 😀 token' : `Factory token ${k}`,
          creator: creator(k),
          decimals: String(decimals),
          totalSupply: (BigInt(1 + pick(1e9, seed, c, TAG.erc20, k, 2)) * 10n ** BigInt(decimals)).toString(),
          timestamp: ts(created(k)),
          type: String(k % 3),
          holderCount: '0',
          updatedAt: ts(created(k)),
          __block: created(k),
        };
      }),
    ),
  );
  put(
    materializedTable(E('User'), (v) => {
      const seen = new Map<string, number>();
      for (let k = 0; k < count(v.at); k++) if (!seen.has(creator(k))) seen.set(creator(k), created(k));
      return [...seen].map(([id, b]) => ({ id, tokens: null, timestamp: ts(b), updatedAt: ts(b), __block: b }));
    }),
  );
  put(emptyTable(E('UserTokenBlance')));
  put(emptyTable(E('TransferHistory')));
  return tables;
}

/** Builds every table of the `mine` schema: mining pools, their rewards, and stakes. */
export function mineTables(model: SchemaModel, w: World): Map<string, Table> {
  const E = (n: string) => model.byName.get(n)!;
  const { seed } = w.opts;
  const c = w.chainId;
  const ts = (b: number) => String(w.tl.ts(b));
  const created = (k: number) => w.createdBlock(w.every.mine, k);
  const mineId = (k: number) => hexOf(5, seed, c, TAG.mine, k);
  const pools = (at: number) => Array.from({ length: w.mineCount(at) }, (_, k) => k);
  const tables = new Map<string, Table>();
  const put = (t: Table) => tables.set(t.entity.name, t);
  put(
    materializedTable(E('MinePool'), (v) =>
      pools(v.at).map((k): Row => {
        const { updated } = w.version(created(k), 2500, v.at);
        const lp = w.pair(w.realPair(created(k), seed, c, TAG.mine, k, 1), created(k));
        return {
          id: mineId(k),
          timestamp: k % 7 === 3 ? null : ts(created(k)),
          creator: w.userId(pick(w.userCount(created(k)), seed, c, TAG.mine, k, 2)),
          pool: mineId(k),
          stakeToken: lp.id,
          isLpToken: k % 2 === 0,
          platform: k % 3 === 0 ? String(k % 2) : null,
          updatedAt: ts(updated),
          __block: updated,
        };
      }),
    ),
  );
  put(
    materializedTable(E('RewardDetail'), (v) =>
      pools(v.at).flatMap((k) => {
        const { version, updated } = w.version(created(k), 2500, v.at);
        // A pool rewards in one or two distinct tokens.
        const first = pick(w.tokenCount(created(k)), seed, c, TAG.mine, k, 3);
        const tokens =
          k % 2 === 1 && w.tokenCount(created(k)) > 1 ? [first, (first + 1) % w.tokenCount(created(k))] : [first];
        return tokens.map((t, r): Row => {
          const token = w.token(t, v.at).id;
          return {
            id: `${mineId(k)}-${token}`,
            minePool: mineId(k),
            token,
            rewardPerBlock: (BigInt(1 + pick(1e6, seed, c, TAG.mine, k, r, version)) * 10n ** 12n).toString(),
            startBlock: String(created(k)),
            endBlock: String(created(k) + 500_000),
            updatedAt: ts(updated),
            __block: updated,
          };
        });
      }),
    ),
  );
  put(
    materializedTable(E('UserStake'), (v) =>
      pools(v.at)
        .flatMap((k) =>
          Array.from({ length: 3 }, (_, j): Row => {
            const u = pick(w.userCount(created(k)), seed, c, TAG.mine, k, 4, j);
            const { version, updated } = w.version(created(k), 700 + j * 100, v.at);
            return {
              id: `${w.userId(u)}-${mineId(k)}`,
              user: w.userId(u),
              pool: mineId(k),
              balance: (BigInt(version + 1) * 10n ** 18n).toString(),
              updatedAt: ts(updated),
              __block: updated,
            };
          }),
        )
        .filter((r, i, all) => all.findIndex((x) => x.id === r.id) === i),
    ),
  );
  return tables;
}
