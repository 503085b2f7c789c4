#!/usr/bin/env bash
# `make bench-stage`: overhead of the stage runtime (MarqueePipeline) against a bare loop written directly on the
# Kafka layer, in the same run, on the same broker. Both consume jobs, produce one output per job and commit, with
# the same concurrency; the stage adds what it is for (envelope and lineage headers, routing, bounded concurrency,
# graceful shutdown). See BENCHMARKS.md.
#
# Each round seeds two fresh topic sets with N jobs, runs the bare loop on one and the stage on the other (the
# order alternates), and the summary's ratio is the median of the rounds' ratios (stage ÷ bare, msgs/s).
#
# Environment: BENCH_COUNT (100000), BENCH_ROUNDS (5), BENCH_CONCURRENCY (256), MARQUEE_KAFKA_PORT (19092).
# The last line is machine-readable:
#   bench-stage: ratio=X.XX stage=… bare=…
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

count="${BENCH_COUNT:-100000}"
rounds="${BENCH_ROUNDS:-5}"
concurrency="${BENCH_CONCURRENCY:-256}"
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"
scratch="$root/.build-release"
bench="$scratch/release/StageBenchmark"
logs="$root/var/bench-stage"
mkdir -p "$logs"

say() { printf '\033[1mbench-stage:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ "$count" =~ ^[1-9][0-9]*$ ]] || die "BENCH_COUNT must be a positive number"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive number"
[[ "$concurrency" =~ ^[1-9][0-9]*$ ]] || die "BENCH_CONCURRENCY must be a positive number"

started=0
if ! scripts/stack.sh status >/dev/null 2>&1; then
    say "starting the local stack (stopped again at the end)"
    scripts/stack.sh up >/dev/null
    started=1
fi
trap 'if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi' EXIT

say "building StageBenchmark (release, scratch path .build-release)"
if ! swift build -c release --scratch-path "$scratch" --product StageBenchmark >"$logs/build.log" 2>&1; then
    tail -n 40 "$logs/build.log" >&2
    die "the build failed; see var/bench-stage/build.log"
fi

run_one() { # mode log
    local prefix="bench-stage.$run.r$round.$1."
    "$bench" seed --brokers "$brokers" --prefix "$prefix" --count "$count" >"$2" 2>&1 || die "seeding failed; see $2"
    timeout 300 "$bench" "$1" --brokers "$brokers" --prefix "$prefix" --count "$count" --concurrency "$concurrency" >>"$2" 2>&1 \
        || die "StageBenchmark $1 failed; see $2"
    grep -oE 'msgs_per_sec=[0-9]+' "$2" | tail -n1 | cut -d= -f2
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

run="$(date +%Y%m%d%H%M%S)-$$"
say "$rounds rounds of $count jobs, concurrency $concurrency, against $brokers; logs in var/bench-stage/"
stages=(); bares=(); ratios=()
for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then
        b=$(run_one bare "$logs/r$round-bare.log"); s=$(run_one stage "$logs/r$round-stage.log")
    else
        s=$(run_one stage "$logs/r$round-stage.log"); b=$(run_one bare "$logs/r$round-bare.log")
    fi
    stages+=("$s"); bares+=("$b"); ratios+=("$(ratio "$s" "$b")")
    printf 'round %d: stage=%s bare=%s ratio=%s (msgs/s)\n' "$round" "$s" "$b" "$(ratio "$s" "$b")"
done
printf 'bench-stage: ratio=%.2f stage=%s bare=%s\n' "$(median "${ratios[@]}")" "$(median "${stages[@]}")" "$(median "${bares[@]}")"
