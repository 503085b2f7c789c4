#!/usr/bin/env bash
# Compares two FetchBenchmark binaries (two builds of the fetch worker) on the movie-detail workload of
# `make bench-fetch`, for a change too small to show in whole benchmark runs on a noisy machine (BENCHMARKS.md,
# "Where the worker's CPU goes: measurements, nothing kept").
#
#   scripts/bench-fetch-pair.sh A B [PAIRS] [COUNT]        (defaults: 10 pairs of 2000 jobs)
#
# Runs curl, A, curl, B, curl, B, curl, A … (the order alternates each pair), and divides each worker run's jobs/s
# by the mean of the two curl runs around it (the same `curl --parallel` as make bench-fetch), so that a slower
# minute of the machine counts against both. Prints one line a pair, then the mean of each side. Needs the
# broker (started and stopped again if it is down) and a release build of marquee-upstream in .build-release.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/fetch-curl.sh
source "$root/scripts/fetch-curl.sh"
[ $# -ge 2 ] || { echo "usage: $0 A B [PAIRS] [COUNT]  (two FetchBenchmark binaries)" >&2; exit 2; }
a="$1" b="$2" pairs="${3:-10}" count="${4:-2000}"
for binary in "$a" "$b"; do [ -x "$binary" ] || { echo "$binary is not an executable" >&2; exit 2; }; done
[[ "$pairs" =~ ^[1-9][0-9]*$ && "$count" =~ ^[1-9][0-9]*$ ]] || { echo "PAIRS and COUNT must be positive numbers" >&2; exit 2; }
upstream="$root/.build-release/release/marquee-upstream"
[ -x "$upstream" ] || { echo "no $upstream: run make bench-fetch (or swift build -c release --scratch-path .build-release) first" >&2; exit 2; }
work="$(mktemp -d)"
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"

started=0 emulator=""
cleanup() {
    if [ -n "$emulator" ]; then kill "$emulator" 2>/dev/null || true; wait "$emulator" 2>/dev/null || true; fi
    if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
if ! (exec 3<>"/dev/tcp/${brokers%:*}/${brokers##*:}") 2>/dev/null; then
    scripts/stack.sh up >/dev/null
    started=1
fi

"$upstream" --port 0 --seed 7 --movies 4000 >"$work/emulator.out" 2>"$work/emulator.log" &
emulator=$!
for _ in $(seq 300); do grep -q '"listening"' "$work/emulator.out" 2>/dev/null && break; sleep 0.1; done
port="$(grep -oE 'http://[0-9.]+:[0-9]+' "$work/emulator.out" | head -n1)"
[ -n "$port" ] || { echo "the emulator did not start; see $work/emulator.log" >&2; exit 1; }
eval "$("$upstream" --print-env --host 127.0.0.1 --port "${port##*:}")"

"$a" urls --kind detail --count "$count" >"$work/urls.txt" 2>/dev/null
curl_config "$work/urls.txt" "$work/urls.cfg"
run_curl() { curl_rate "$work/urls.cfg" "$count" 32 "$work/curl.out"; }
run_worker() {
    "$1" run --brokers "$brokers" --kind detail --count "$count" --concurrency 32 2>&1 | tail -n1 \
        | grep -oE 'jobs_per_sec=[0-9]+' | cut -d= -f2
}
ratio() { awk -v f="$1" -v x="$2" -v y="$3" 'BEGIN { printf "%.3f", 2 * f / (x + y) }'; }

sum_a=0 sum_b=0
before="$(run_curl)"
for pair in $(seq 1 "$pairs"); do
    if ((pair % 2)); then first="$a" second="$b" names=(A B); else first="$b" second="$a" names=(B A); fi
    f1="$(run_worker "$first")"; middle="$(run_curl)"; f2="$(run_worker "$second")"; after="$(run_curl)"
    r1="$(ratio "$f1" "$before" "$middle")"; r2="$(ratio "$f2" "$middle" "$after")"
    echo "pair $pair: ${names[0]} $r1 ($f1 jobs/s)  ${names[1]} $r2 ($f2 jobs/s)  curl $before $middle $after"
    if [ "${names[0]}" = A ]; then ra="$r1" rb="$r2"; else ra="$r2" rb="$r1"; fi
    sum_a="$(awk -v s="$sum_a" -v r="$ra" 'BEGIN { print s + r }')"
    sum_b="$(awk -v s="$sum_b" -v r="$rb" 'BEGIN { print s + r }')"
    before="$after"
done
awk -v a="$sum_a" -v b="$sum_b" -v n="$pairs" 'BEGIN { printf "bench-fetch-pair: a=%.3f b=%.3f pairs=%d\n", a / n, b / n, n }'
