-- Tables of the exporter itself: checkpoints (committed with the data they describe) and the run ledger.
-- Every statement here is idempotent and is followed by a CHECKPOINT, so that schema changes never sit in the WAL:
-- DuckDB can fail to replay catalog entries after a crash (duckdb/duckdb#19712, #22044).
CREATE SCHEMA IF NOT EXISTS _pool_export;

CREATE TABLE IF NOT EXISTS _pool_export.checkpoints (
  chain_id   INTEGER NOT NULL,
  dataset    VARCHAR NOT NULL,
  cursor     VARCHAR NOT NULL,   -- JSON: the position after the last committed row
  block      BIGINT,             -- the block the committed rows were read at
  block_time TIMESTAMPTZ,        -- that block's timestamp, for lag reporting
  run_id     VARCHAR,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, dataset)
);

-- The digest of each chain's last stored snapshot of a dataset (SHA-256 of its mapped rows, sorted), with the run,
-- block and time that stored it: a snapshot read again equal to it is not stored again, found without reading a row.
CREATE TABLE IF NOT EXISTS _pool_export.snapshot_digests (
  chain_id INTEGER NOT NULL,
  dataset  VARCHAR NOT NULL,
  run_id   VARCHAR NOT NULL,
  block    BIGINT,
  taken_at TIMESTAMPTZ,
  rows     BIGINT NOT NULL,
  digest   VARCHAR NOT NULL,
  PRIMARY KEY (chain_id, dataset)
);

CREATE TABLE IF NOT EXISTS _pool_export.runs (
  run_id     VARCHAR PRIMARY KEY,
  jobs       VARCHAR,
  started_at TIMESTAMPTZ NOT NULL,
  ended_at   TIMESTAMPTZ,
  status     VARCHAR NOT NULL,    -- running, ok, failed, stopped
  tasks      INTEGER,
  failed     INTEGER,
  rows       BIGINT,
  requests   BIGINT,
  retries    BIGINT,
  error      VARCHAR
);

CREATE TABLE IF NOT EXISTS _pool_export.run_tasks (
  run_id        VARCHAR NOT NULL,
  chain_id      INTEGER NOT NULL,
  dataset       VARCHAR NOT NULL,
  started_at    TIMESTAMPTZ NOT NULL,
  ended_at      TIMESTAMPTZ,
  status        VARCHAR NOT NULL,   -- ok, failed, unavailable (the upstream deployment has no such entity)
  pages         INTEGER,
  rows          BIGINT,
  requests      INTEGER,
  retries       INTEGER,
  block         BIGINT,
  cursor_before VARCHAR,
  cursor_after  VARCHAR,
  out_of_range  VARCHAR,            -- JSON: {outOfRange, truncated} values per column whose numeric column is not exact
  error_class   VARCHAR,
  error         VARCHAR
);
-- Rows the upstream sent with an id it had already sent (an upstream defect; the newest was kept).
ALTER TABLE _pool_export.run_tasks ADD COLUMN IF NOT EXISTS duplicate_ids INTEGER;
-- The route that served the task (its label: never a key), and, when its chain and schema has several, where each
-- route stood at the task's start (JSON: label, head, lagBlocks, state, note).
ALTER TABLE _pool_export.run_tasks ADD COLUMN IF NOT EXISTS route VARCHAR;
ALTER TABLE _pool_export.run_tasks ADD COLUMN IF NOT EXISTS routes VARCHAR;
-- Moves to another route during the task, and refused ones (JSON: from, to, block, reason, refused).
ALTER TABLE _pool_export.run_tasks ADD COLUMN IF NOT EXISTS failovers VARCHAR;
-- The head of the task's route when it read, as `<number>:<hash>`: a task whose route stands at the same head again
-- has nothing new to read (a reorg to the same height changes the hash).
ALTER TABLE _pool_export.run_tasks ADD COLUMN IF NOT EXISTS head VARCHAR;

-- What the Parquet lake still lacks, written in the transaction that commits the rows and cleared once the lake files
-- are in place: a run killed (or a task failed) after its commit is caught up by the next run's lake write.
CREATE TABLE IF NOT EXISTS _pool_export.lake_pending (
  chain_id INTEGER NOT NULL,
  dataset  VARCHAR NOT NULL,
  from_seq BIGINT,                  -- events and buckets: rewrite the day files from this key on
  runs     VARCHAR[] NOT NULL,      -- runs whose rows are not in the lake yet (history and snapshot parts)
  PRIMARY KEY (chain_id, dataset)
);
-- Rewrite every file of the dataset and chain, replacing its folders whole (after a migration changed its types).
ALTER TABLE _pool_export.lake_pending ADD COLUMN IF NOT EXISTS rebuild BOOLEAN DEFAULT false;
-- Whether the commits listed may have taken rows of other runs out of the table on this chain (a snapshot taken again
-- at a block stored already, a re-read window): the lake's files of a snapshot or the list are then searched for rows to
-- remove. False only where the sink knows that nothing left; true (the default) for every entry written otherwise.
ALTER TABLE _pool_export.lake_pending ADD COLUMN IF NOT EXISTS dropped BOOLEAN DEFAULT true;

-- Facts about the warehouse itself: `schema_version` (see src/store/migrations.ts).
CREATE TABLE IF NOT EXISTS _pool_export.meta (
  key   VARCHAR PRIMARY KEY,
  value VARCHAR NOT NULL
);


-- Where each shard of a backfill under way stands: shard `shard` of `shards` (1-based) of a dataset on a chain. The
-- rows go, in the transaction that merges them into the dataset's own checkpoint, when every shard is done. Older
-- versions kept them in `checkpoints` as `<dataset>#<shard>/<shards>`; opening the warehouse moves such rows here.
CREATE TABLE IF NOT EXISTS _pool_export.shard_checkpoints (
  chain_id   INTEGER NOT NULL,
  dataset    VARCHAR NOT NULL,
  shard      INTEGER NOT NULL,
  shards     INTEGER NOT NULL,
  cursor     VARCHAR NOT NULL,   -- JSON: the shard's key range and the position after its last committed row
  block      BIGINT,
  block_time TIMESTAMPTZ,
  run_id     VARCHAR,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, dataset, shard)
);

-- Verifications of the stored rows against the upstream's counters (`pool-export verify`, and each run's of the days
-- it touched): one row per identity checked (or not) on a chain. `gaps` counts the groups that differ; `mismatches`
-- holds the first of them (JSON: day, key, expected, found).
CREATE TABLE IF NOT EXISTS _pool_export.verifications (
  run_id     VARCHAR NOT NULL,   -- the run that verified, or `verify-<id>` for the command
  chain_id   INTEGER NOT NULL,
  dataset    VARCHAR NOT NULL,
  identity   VARCHAR NOT NULL,
  checked_at TIMESTAMPTZ NOT NULL,
  block      BIGINT,
  first_day  BIGINT,             -- Unix seconds of the first and last day compared (day identities)
  last_day   BIGINT,
  groups     INTEGER,
  gaps       INTEGER,
  mismatches VARCHAR,
  skipped    VARCHAR,
  error      VARCHAR
);
