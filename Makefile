# Marquee — the two commands are `make run` (the pipeline end to end) and `make test`.
# Every target installs what is missing first (scripts/setup.sh is idempotent).

SHELL := /bin/bash
ROOT := $(abspath .)
export PKG_CONFIG_PATH := $(ROOT)/.deps/rdkafka/lib/pkgconfig
SWIFT_BUILD_FLAGS ?=

.PHONY: run test setup build up down status completions bench-kafka bench-stage bench-fetch bench-images bench-index clean

## make run: set up, build, start the local stack, run every worker on a demo crawl (the upstream emulator unless
## API keys are set), show progress until it drained, and print a summary. PAGES, FETCH_WORKERS, IMAGE_WORKERS,
## INDEX_WORKERS, MAX_WAIT and KEEP_RUNNING=1 change it (scripts/run.sh).
run: setup build up
	scripts/run.sh

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

## make bench-images: the imaging path vs vipsthumbnail and ImageMagick, same posters, same run.
bench-images: setup
	scripts/bench-images.sh

## make bench-index: the store's batched upserts vs PostgreSQL COPY of the same rows, same run; and SQLite.
bench-index: setup
	scripts/bench-index.sh

## make completions: bash, zsh and fish completion scripts for every executable, into var/completions/.
completions: build
	scripts/completions.sh

clean:
	rm -rf .build
