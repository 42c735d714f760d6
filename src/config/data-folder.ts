/**
 * The data folder's owner: every file and folder pool-export keeps in it is named here, and every other module asks
 * for its paths here and builds none itself (as dlt's storages own their folders: `dlt/common/storages/`).
 *
 * ```
 * <dataDir>/
 *   warehouse.duckdb        the warehouse: every dataset's table, checkpoints, run ledger, verifications
 *   lake/                   the Parquet lake; what is inside it is the lake's layout (lake/layout.ts)
 *   views.duckdb            the views file: views over the lake and the report macros, for readers (earlier
 *                           versions called it lake.duckdb, beside lake/; the next write of the views removes that)
 *   views.key.json          the key the views file was built for, with the file's size and time as written: a run
 *                           finds the views file current without opening it
 *   status.json             the last run's figures, for `status` and health checks during a run
 *   subgraphs.json          the subgraphs of any schema added by `pool-export subgraph add`, with their schemas
 *   .lock, .lock-owner.json the data folder's lock and who holds it
 *   .tmp/                   a run's page files before they are committed
 *   lake-bucket.json        a bucket lake: what of the lake the bucket holds
 *   .bucket-tmp/            a bucket lake: objects being fetched
 *   .restore/               a bucket lake: a warehouse being restored from the bucket
 *   lake.new/, lake.old/    a lake being migrated from an earlier layout, and the one it replaces
 * ```
 */
import { join } from 'node:path';

/** The names inside the data folder. */
export const DATA_FOLDER_NAMES = {
  warehouse: 'warehouse.duckdb',
  lake: 'lake',
  views: 'views.duckdb',
  viewsBefore: 'lake.duckdb',
  viewsKey: 'views.key.json',
  status: 'status.json',
  subgraphs: 'subgraphs.json',
  lock: '.lock',
  lockOwner: '.lock-owner.json',
  pageFiles: '.tmp',
  bucketSync: 'lake-bucket.json',
  bucketTmp: '.bucket-tmp',
  restore: '.restore',
  lakeNew: 'lake.new',
  lakeOld: 'lake.old',
} as const;

/** The paths of one data folder. */
export class DataFolder {
  constructor(readonly root: string) {}

  /** The warehouse's DuckDB file. */
  get warehouse(): string {
    return join(this.root, DATA_FOLDER_NAMES.warehouse);
  }
  /** The Parquet lake's root folder. */
  get lake(): string {
    return join(this.root, DATA_FOLDER_NAMES.lake);
  }
  /** The views file: views over the lake and the report macros. */
  get views(): string {
    return join(this.root, DATA_FOLDER_NAMES.views);
  }
  /** The key the views file was built for, and that file's size and time then (`reports/views.ts`). */
  get viewsKey(): string {
    return join(this.root, DATA_FOLDER_NAMES.viewsKey);
  }
  /** The views file's name in earlier versions, removed when the views are next written. */
  get viewsBefore(): string {
    return join(this.root, DATA_FOLDER_NAMES.viewsBefore);
  }
  /** The status file of the last run. */
  get status(): string {
    return join(this.root, DATA_FOLDER_NAMES.status);
  }
  /** The subgraphs of any schema added to this folder (`pool-export subgraph add`). */
  get subgraphs(): string {
    return join(this.root, DATA_FOLDER_NAMES.subgraphs);
  }
  /** The lock (a folder, taken by `mkdir`). */
  get lock(): string {
    return join(this.root, DATA_FOLDER_NAMES.lock);
  }
  /** Who holds the lock. */
  get lockOwner(): string {
    return join(this.root, DATA_FOLDER_NAMES.lockOwner);
  }
  /** A run's page files before they are committed. */
  get pageFiles(): string {
    return join(this.root, DATA_FOLDER_NAMES.pageFiles);
  }
  /** What of the lake a bucket holds. */
  get bucketSync(): string {
    return join(this.root, DATA_FOLDER_NAMES.bucketSync);
  }
  /** Objects being fetched from a bucket. */
  get bucketTmp(): string {
    return join(this.root, DATA_FOLDER_NAMES.bucketTmp);
  }
  /** A warehouse being restored from a bucket. */
  get restore(): string {
    return join(this.root, DATA_FOLDER_NAMES.restore);
  }
  /** A lake being written in this layout from one of an earlier layout. */
  get lakeNew(): string {
    return join(this.root, DATA_FOLDER_NAMES.lakeNew);
  }
  /** The lake of an earlier layout, once replaced. */
  get lakeOld(): string {
    return join(this.root, DATA_FOLDER_NAMES.lakeOld);
  }
}

/** The paths of the data folder `dataDir`. */
export const dataFolder = (dataDir: string): DataFolder => new DataFolder(dataDir);
