# Marquee — the two commands are `make run` (the pipeline end to end) and `make test`.
# Every target installs what is missing first (scripts/setup.sh is idempotent).

SHELL := /bin/bash
ROOT := $(abspath .)
export PKG_CONFIG_PATH := $(ROOT)/.deps/rdkafka/lib/pkgconfig
SWIFT_BUILD_FLAGS ?=

.PHONY: run test setup build build-run up down status completions fault-run fault-net bench-kafka bench-stage bench-fetch bench-scale bench-images bench-index bench-e2e bench-backfill clean

# The executables `make run` starts: a first run builds only these.
RUN_PRODUCTS := marquee marquee-fetch marquee-images marquee-index marquee-upstream

## make run: set up what it needs, build the executables it starts, start the broker (and PostgreSQL when
## MARQUEE_STORE is one), run every worker on a demo crawl (the upstream emulator unless API keys are set), show
## progress until it drained, and print a summary. PAGES, FETCH_WORKERS, IMAGE_WORKERS, INDEX_WORKERS, MAX_WAIT
## and KEEP_RUNNING=1 change it (scripts/run.sh).
run: build-run
	@scripts/stack.sh up kafka >/dev/null
	scripts/run.sh

build-run:
	@scripts/setup.sh $(if $(filter postgres%,$(MARQUEE_STORE)),postgres,run)
	@for product in $(RUN_PRODUCTS); do swift build $(SWIFT_BUILD_FLAGS) --product $$product || exit 1; done

## make test: unit and integration tests against the real broker (started here, stopped afterwards if it was).
test: setup
	scripts/test.sh

setup:
	@scripts/setup.sh

build: setup
	swift build $(SWIFT_BUILD_FLAGS)

up: setup
	@scripts/stack.sh up

down:
	@scripts/stack.sh down

status:
	@scripts/stack.sh status

## make bench-kafka: Swift layer vs librdkafka's rdkafka_performance, same broker, same run.
bench-kafka: setup
	scripts/bench-kafka.sh

## make bench-stage: the stage runtime vs a bare loop on the Kafka layer, same broker, same run.
bench-stage: setup
	scripts/bench-stage.sh

## make bench-fetch: the fetch worker vs curl --parallel on the same URLs (emulator), CPU per job, rate-limit accuracy.
bench-fetch: setup
	scripts/bench-fetch.sh

## make bench-scale: 1, 2 and 4 fetch workers sharing one TMDB limit against the emulator's: utilisation, 429s, peak
## rate per second (BENCH_JOBS, BENCH_RATE, BENCH_WORKERS: scripts/bench-scale.sh). Starts the broker if it is down.
bench-scale: setup
	scripts/bench-scale.sh

## make bench-images: the imaging path vs vipsthumbnail and ImageMagick, same posters, same run.
bench-images: setup
	scripts/bench-images.sh

## make bench-index: the store's batched upserts vs PostgreSQL COPY of the same rows, same run; and SQLite.
bench-index: setup
	scripts/bench-index.sh

## make fault-run: a crawl under faults (upstream errors, kill -9s, broker and PostgreSQL outages), then every job
## accounted for (FAULT_SHORT=1 for the short form CI runs; FAULT_PAGES, CHAOS_SECONDS: scripts/fault-run.sh).
fault-run: setup build up
	scripts/fault-run.sh

## make fault-net: the pipeline on several hosts (network namespaces on a bridge, as root): a worker host, the store
## and the broker cut off, fetch and images scaled 1 -> 4 -> 1, kill -9s; every job accounted for, reruns, lineage
## regressions, partitions without an owner (FAULT_SHORT=1 for the short form; FAULT_NET_HOSTS, FAULT_NET_TUNING:
## scripts/fault-net.sh). Starts a broker and a PostgreSQL of its own; without root it says so and skips.
fault-net: setup build
	scripts/fault-net.sh

## make bench-backfill: a 100,000-movie TMDB export through `marquee enqueue tmdb-export --details` with fetch and
## index running: ids enqueued/s, details stored/s vs the fetch worker alone, peak backlog, peak RSS.
bench-backfill: setup up
	scripts/bench-backfill.sh

## make bench-e2e: a 10,000-movie crawl end to end (release builds, PostgreSQL), with one and two image workers,
## against the imaging path alone on the same posters; e2e_ratio (BENCH_MOVIES for a smaller crawl).
bench-e2e: setup up
	scripts/bench-e2e.sh

## make completions: bash, zsh and fish completion scripts for every executable, into var/completions/.
completions: build
	scripts/completions.sh

clean:
	rm -rf .build
