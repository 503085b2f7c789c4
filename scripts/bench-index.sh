#!/usr/bin/env bash
# `make bench-index`: records/s upserted into PostgreSQL through the store's batched path (the indexer's: one
# transaction per batch of BENCH_BATCH records) against COPY of the same rows into scratch tables of the same
# shape, same run, same server; and the same records into SQLite. See BENCHMARKS.md.
#
# Environment: BENCH_RECORDS (20000), BENCH_BATCH (500), BENCH_WRITERS (2: batches written at once, as the
# indexer's --writers), BENCH_ROUNDS (3), MARQUEE_POSTGRES_PORT (15432).
# The last line is machine-readable:
#   bench-index: ratio=X.XX upsert=… copy=… sqlite=… records=… batch=… writers=…
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

records="${BENCH_RECORDS:-20000}"
batch="${BENCH_BATCH:-500}"
writers="${BENCH_WRITERS:-2}"
rounds="${BENCH_ROUNDS:-3}"
postgres="postgres://marquee@127.0.0.1:${MARQUEE_POSTGRES_PORT:-15432}/marquee?sslmode=disable"
scratch="$root/.build-release"
logs="$root/var/bench-index"
mkdir -p "$logs"

say() { printf '\033[1mbench-index:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for value in "$records" "$batch" "$writers" "$rounds"; do
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RECORDS, BENCH_BATCH, BENCH_WRITERS and BENCH_ROUNDS must be positive numbers"
done

started=0
if ! scripts/stack.sh status >/dev/null 2>&1; then
    say "starting the local stack (stopped again at the end)"
    scripts/stack.sh up >/dev/null
    started=1
fi
trap 'if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi' EXIT

say "building IndexBenchmark (release, scratch path .build-release)"
if ! swift build -c release --scratch-path "$scratch" --product IndexBenchmark >"$logs/build.log" 2>&1; then
    tail -n 40 "$logs/build.log" >&2
    die "the build failed; see var/bench-index/build.log"
fi

say "$rounds rounds of $records records, batches of $batch, $writers at once"
"$scratch/release/IndexBenchmark" --postgres "$postgres" --records "$records" --batch-size "$batch" --writers "$writers" \
    --rounds "$rounds" --sqlite-folder "$logs" | tee "$logs/last.txt"
