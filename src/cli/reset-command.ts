/**
 * `pool-export reset DATASET… [--chains …] [--yes]`: empties datasets so that the next run reads them whole. Without
 * `--yes` it says what it would remove and changes nothing. With it, holding the data folder's lock: the warehouse's
 * rows, checkpoints (the shards' too) and pending lake writes of each dataset on those chains go in one transaction;
 * then the dataset's lake folders of those chains; then, for a bucket lake, the publish deletes the objects no local
 * file backs any more and puts up the state. A reset stopped part-way is finished by giving it again (or by the next
 * run: a dataset without checkpoint is read whole, and the lake is rewritten from what it reads).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { type Dataset, datasetNamed } from '../catalog/catalog.ts';
import { chainFolder, chainName } from '../config/chains.ts';
import { type Config, trackedSettings } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { UsageError } from '../errors.ts';
import { type TablePart, tableDir } from '../lake/layout.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { writeViewsFile } from '../reports/views.ts';
import { forgetRows } from '../store/lake-rebuild.ts';
import { refreshStatusFile } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';
import { qt } from '../util/sql.ts';
import type { CommandBody } from './command-body.ts';
import { CHAINS_FILTER, chainsOption, checkReadableDataDir, configFor, parseChains } from './options.ts';
import { type MaintenanceArgs, maintenanceOptions, withDataLock } from './write-options.ts';

interface Args extends MaintenanceArgs {
  datasets: string[];
  chains?: string;
  yes: boolean;
}

/** What a reset removes of one dataset on one chain. */
interface Removal {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly rows: number;
  readonly checkpoint: boolean;
  /** The dataset's lake folders of the chain, with their files and bytes. */
  readonly folders: readonly string[];
  readonly files: number;
  readonly bytes: number;
}

/** Files and bytes below a folder. */
function sizeOf(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) {
      files++;
      bytes += statSync(join(e.parentPath, e.name)).size;
    }
  return { files, bytes };
}

/** The lake folders of a dataset on a chain (its rows; a mutable entity's history too) that exist. */
function lakeFolders(config: Config, ds: Dataset, chainId: number): string[] {
  const parts: TablePart[] = ds.kind === 'mutable' ? ['data', 'history'] : ['data'];
  return parts
    .map((part) => join(tableDir(dataFolder(config.dataDir).lake, ds, part), `chain=${chainFolder(chainId)}`))
    .filter((d) => existsSync(d));
}

/** What the reset of `datasets` on `chains` (every chain that holds them, when not given) removes. */
async function removals(
  w: Warehouse,
  config: Config,
  opts: { datasets: readonly Dataset[]; chains: readonly number[] | undefined },
): Promise<Removal[]> {
  const out: Removal[] = [];
  for (const ds of opts.datasets) {
    const rows = new Map(
      (await w.all(`SELECT chain_id, count(*) AS n FROM ${qt(ds.table)} GROUP BY chain_id`)).map((r) => [
        Number(r.chain_id),
        Number(r.n),
      ]),
    );
    const checkpoints = new Set(
      (
        await w.all(
          `SELECT chain_id FROM _pool_export.checkpoints WHERE dataset = $1
           UNION SELECT chain_id FROM _pool_export.shard_checkpoints WHERE dataset = $1`,
          [ds.name],
        )
      ).map((r) => Number(r.chain_id)),
    );
    const chains = opts.chains ?? [...new Set([...rows.keys(), ...checkpoints])].sort((a, b) => a - b);
    for (const chainId of chains) {
      const folders = lakeFolders(config, ds, chainId);
      const sizes = folders.map(sizeOf);
      out.push({
        ds,
        chainId,
        rows: rows.get(chainId) ?? 0,
        checkpoint: checkpoints.has(chainId),
        folders,
        files: sizes.reduce((n, s) => n + s.files, 0),
        bytes: sizes.reduce((n, s) => n + s.bytes, 0),
      });
    }
  }
  return out;
}

/** One line per dataset and chain. */
function describe(r: Removal): string {
  const lake = r.files ? `${r.files} lake files (${(r.bytes / 1e6).toFixed(1)} MB)` : 'no lake file';
  return `${r.ds.name} on ${chainName(r.chainId)}: ${r.rows.toLocaleString('en-US')} rows, ${r.checkpoint ? 'its checkpoint' : 'no checkpoint'}, ${lake}`;
}

/** Empties each dataset on each chain: the warehouse first (one transaction), then the lake's folders. */
async function reset(w: Warehouse, rs: readonly Removal[]): Promise<void> {
  await w.transaction(async (tx) => {
    for (const r of rs) {
      await forgetRows(tx, r.ds, r.chainId);
      // Its lake folders go below: nothing is left to write there.
      await tx.exec('DELETE FROM _pool_export.lake_pending WHERE dataset = $1 AND chain_id = $2', [
        r.ds.name,
        r.chainId,
      ]);
    }
  });
  for (const r of rs) for (const f of r.folders) rmSync(f, { recursive: true, force: true });
}

/** The yargs module of the `reset` command. */
export const resetCommand: CommandBody<Args> = {
  builder: (y: Argv) =>
    chainsOption(
      maintenanceOptions(y)
        .positional('datasets', {
          type: 'string',
          array: true,
          describe: 'the datasets to empty, e.g. uniswap.pools dodoex.swaps (`pool-export datasets` lists them)',
        })
        .option('yes', {
          type: 'boolean',
          default: false,
          describe: 'remove them (without it, reset says what it would remove and changes nothing)',
        }),
      CHAINS_FILTER,
    ) as unknown as Argv<Args>,
  handler: async (a) => {
    // The configuration first: it registers the folder's subgraphs, whose datasets are named here too.
    const dir = configFor(a).dataDir;
    const datasets = [...new Set((a.datasets ?? []).map((n) => datasetNamed(n)))];
    const chains = parseChains(a.chains);
    checkReadableDataDir(dir);
    if (!existsSync(dataFolder(dir).warehouse))
      throw new UsageError(
        `the data folder ${dir} holds no warehouse: nothing to reset (point --data-dir or POOL_EXPORT_DATA_DIR at the folder a run wrote)`,
      );
    await withDataLock(a, 'reset', async (config) => {
      const w = await Warehouse.open(config.dataDir);
      try {
        const rs = await removals(w, config, { datasets, chains: chains?.length ? chains : undefined });
        if (!rs.length) {
          process.stdout.write(`nothing to reset: ${datasets.map((d) => d.name).join(', ')} holds no data here\n`);
          return;
        }
        const lines = rs.map((r) => `  ${describe(r)}`);
        if (!a.yes) {
          process.stdout.write(
            `reset would remove:\n${lines.join('\n')}\nnothing was changed: give --yes to remove them; the next run then reads them whole\n`,
          );
          return;
        }
        await reset(w, rs);
        if (config.lake.bucket) await updateLakeFor(w, config, { runId: `reset-${randomUUID()}` });
        await refreshStatusFile(w, config.dataDir).catch(() => undefined);
        await writeViewsFile(config.dataDir, trackedSettings(config));
        process.stdout.write(`removed:\n${lines.join('\n')}\nthe next run reads them whole\n`);
      } finally {
        await w.close();
      }
    });
  },
};
