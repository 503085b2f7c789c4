#!/usr/bin/env bash
# `make bench-fetch`: efficiency of the fetch worker with limits off, against the upstream emulator. See BENCHMARKS.md.
#
# 1. Rounds of a movie-detail workload, side by side in the same run: the fetch worker (Benchmarks/FetchBenchmark,
#    the same code as marquee-fetch: fetch, parse, produce records and follow-ups, commit) and
#    `curl --parallel --parallel-max N` fetching the same URLs at the same concurrency (libcurl's own ceiling,
#    without parsing or Kafka). The order alternates; the ratio (worker ÷ curl, jobs/s) is the median of the rounds'.
# 2. The worker's CPU time per job (user + system, the whole process) for a list page, a movie detail and a search
#    page.
# 3. `wrk -t2 -c64` on one of the detail URLs: the emulator's own ceiling.
# 4. Rate-limit accuracy: the worker with a client limit of BENCH_RATE req/s (burst 1) against an emulator limiting
#    at the same rate, over BENCH_RATE_SECONDS; the achieved rate and the emulator's count of 429s.
#
# Environment: BENCH_JOBS (2000), BENCH_CONCURRENCY (32), BENCH_ROUNDS (5), BENCH_CPU_JOBS (500), BENCH_MOVIES (4000),
# BENCH_WRK_SECONDS (5), BENCH_RATE (50), BENCH_RATE_SECONDS (60; 0 skips the rate test), MARQUEE_KAFKA_PORT (19092).
# The last line is machine-readable:
#   bench-fetch: ratio=… fetch_jobs_per_sec=… curl_per_sec=… wrk_per_sec=… cpu_us_list=… cpu_us_detail=…
#                cpu_us_search=… rate_achieved=… rate_error_pct=… rate_429=…     (one line)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

jobs="${BENCH_JOBS:-2000}"
concurrency="${BENCH_CONCURRENCY:-32}"
rounds="${BENCH_ROUNDS:-5}"
cpu_jobs="${BENCH_CPU_JOBS:-500}"
movies="${BENCH_MOVIES:-4000}"
wrk_seconds="${BENCH_WRK_SECONDS:-5}"
rate="${BENCH_RATE:-50}"
rate_seconds="${BENCH_RATE_SECONDS:-60}"
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"
scratch="$root/.build-release"
bench="$scratch/release/FetchBenchmark"
upstream="$scratch/release/marquee-upstream"
logs="$root/var/bench-fetch"
mkdir -p "$logs"

# shellcheck source=scripts/fetch-curl.sh
source "$root/scripts/fetch-curl.sh"

say() { printf '\033[1mbench-fetch:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for knob in jobs concurrency rounds cpu_jobs movies wrk_seconds rate; do
    [[ "${!knob}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_${knob^^} must be a positive number"
done
[[ "$rate_seconds" =~ ^[0-9]+$ ]] || die "BENCH_RATE_SECONDS must be a number"
# wrk (the emulator's own ceiling) is this benchmark's own need, not the project's build: installed here.
if ! command -v wrk >/dev/null; then
    say "installing wrk"
    as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y -qq --no-install-recommends wrk >/dev/null 2>&1 \
        || { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq --no-install-recommends wrk >/dev/null; } \
        || die "could not install wrk (Debian package wrk)"
fi
for tool in curl wrk python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

started=0
emulators=()
cleanup() {
    for pid in "${emulators[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${emulators[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# Only the broker is needed (a stopped PostgreSQL does not matter here).
if ! (exec 3<>"/dev/tcp/${brokers%:*}/${brokers##*:}") 2>/dev/null; then
    say "starting the local stack (stopped again at the end)"
    scripts/stack.sh up >/dev/null
    started=1
fi

say "building marquee-upstream and FetchBenchmark (release, scratch path .build-release)"
for product in marquee-upstream FetchBenchmark; do
    if ! swift build -c release --scratch-path "$scratch" --product "$product" >"$logs/build-$product.log" 2>&1; then
        tail -n 40 "$logs/build-$product.log" >&2
        die "the build of $product failed; see var/bench-fetch/build-$product.log"
    fi
done

# Starts an emulator on a free port (extra flags as arguments); sets emulator_url and the worker's environment
# (TMDB_BASE_URL, keys …) from its --print-env.
start_emulator() { # name flags…
    local name="$1"; shift
    # Removed first: the shell truncates the file only once the emulator's process starts, and the wait below
    # could read a stale "listening" line from an earlier run (it did on a loaded machine).
    rm -f "$logs/$name.out"
    "$upstream" --port 0 --seed 7 --movies "$movies" "$@" >"$logs/$name.out" 2>"$logs/$name.log" &
    emulators+=("$!")
    local waited=0
    until grep -q '"listening"' "$logs/$name.out" 2>/dev/null; do
        kill -0 "${emulators[-1]}" 2>/dev/null || die "the emulator exited; see var/bench-fetch/$name.log"
        ((waited++ < 300)) || die "the emulator did not start in 30 s"
        sleep 0.1
    done
    emulator_url="$(grep -oE 'http://[0-9.]+:[0-9]+' "$logs/$name.out" | head -n1)"
    eval "$("$upstream" --print-env --host 127.0.0.1 --port "${emulator_url##*:}")"
}

stop_emulator() {
    local pid="${emulators[-1]}"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset 'emulators[-1]'
}

field() { grep -oE "(^| )$1=[0-9.]+" "$2" | tail -n1 | cut -d= -f2; } # name log
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

run_worker() { # kind count log → jobs/s (cpu µs/job in the log)
    timeout 600 "$bench" run --brokers "$brokers" --kind "$1" --count "$2" --concurrency "$concurrency" >"$3" 2>&1 \
        || die "FetchBenchmark run --kind $1 failed; see ${3#"$root"/}"
    local failed; failed="$(field failed "$3")"
    [ "${failed:-0}" = 0 ] || say "warning: $failed jobs failed (retried) in ${3#"$root"/}"
    field jobs_per_sec "$3"
}

run_curl() { # log → requests/s
    curl_rate "$logs/urls.cfg" "$jobs" "$concurrency" "$1" || die "the curl run failed"
}

# --- 1. the worker vs curl, movie details -----------------------------------------------------------------------
start_emulator emulator
say "emulator at $emulator_url ($movies movies); $rounds rounds of $jobs movie details, concurrency $concurrency; logs in var/bench-fetch/"
"$bench" urls --kind detail --count "$jobs" >"$logs/urls.txt" 2>"$logs/urls.log" || die "FetchBenchmark urls failed; see var/bench-fetch/urls.log"
[ "$(wc -l <"$logs/urls.txt")" = "$jobs" ] || die "FetchBenchmark urls printed $(wc -l <"$logs/urls.txt") URLs, not $jobs"
curl_config "$logs/urls.txt" "$logs/urls.cfg"

workers=(); curls=(); ratios=()
for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then
        f=$(run_worker detail "$jobs" "$logs/r$round-worker.log"); c=$(run_curl "$logs/r$round-curl.log")
    else
        c=$(run_curl "$logs/r$round-curl.log"); f=$(run_worker detail "$jobs" "$logs/r$round-worker.log")
    fi
    workers+=("$f"); curls+=("$c"); ratios+=("$(ratio "$f" "$c")")
    w="$logs/r$round-worker.log"
    printf 'round %d: fetch=%s curl=%s ratio=%s (jobs/s; worker: %s µs CPU/job, %s ms/job of which %s ms in the handler)\n' \
        "$round" "$f" "$c" "$(ratio "$f" "$c")" "$(field cpu_us_per_job "$w")" "$(field job_ms "$w")" "$(field handler_ms "$w")"
done

# --- 2. CPU per job ---------------------------------------------------------------------------------------------
say "CPU per job: $cpu_jobs jobs each of list pages, movie details and search pages"
declare -A cpu
for kind in list detail search; do
    jps=$(run_worker "$kind" "$cpu_jobs" "$logs/cpu-$kind.log")
    cpu[$kind]="$(field cpu_us_per_job "$logs/cpu-$kind.log")"
    printf 'cpu %s: %s µs/job (%s jobs/s)\n' "$kind" "${cpu[$kind]}" "$jps"
done

# --- 3. the emulator's ceiling ----------------------------------------------------------------------------------
say "wrk -t2 -c64 -d${wrk_seconds}s on one movie detail"
wrk -t2 -c64 -d"${wrk_seconds}s" "$(head -n1 "$logs/urls.txt")" >"$logs/wrk.log" 2>&1 || die "wrk failed; see var/bench-fetch/wrk.log"
wrk_rate="$(awk '/^Requests\/sec:/ { printf "%d", $2 }' "$logs/wrk.log")"
printf 'wrk: %s requests/s\n' "$wrk_rate"
stop_emulator

# --- 4. rate-limit accuracy -------------------------------------------------------------------------------------
rate_achieved=-; rate_error=-; rate_429=-
if [ "$rate_seconds" -gt 0 ]; then
    start_emulator emulator-rate --rate-limit "$rate"
    say "rate limit: client $rate req/s (burst 1) against the emulator's $rate req/s, ${rate_seconds}s"
    timeout $((rate_seconds + 300)) "$bench" rate --brokers "$brokers" --rate "$rate" --seconds "$rate_seconds" \
        --concurrency "$concurrency" >"$logs/rate.log" 2>&1 || die "FetchBenchmark rate failed; see var/bench-fetch/rate.log"
    rate_achieved="$(field achieved "$logs/rate.log")"
    rate_error="$(field error_pct "$logs/rate.log")"
    curl --silent --fail "$emulator_url/_stats" >"$logs/rate-stats.json" || die "the emulator's /_stats did not answer"
    rate_429="$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(max(sum(s.get("rateLimited", {}).values()), s.get("statuses", {}).get("429", 0)))' "$logs/rate-stats.json")"
    printf 'rate: achieved %s req/s (%s%% off %s), %s answers 429, max %s requests in one second (emulator)\n' \
        "$rate_achieved" "$rate_error" "$rate" "$rate_429" \
        "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["maxRequestsPerSecondByUpstream"].get("tmdb", 0))' "$logs/rate-stats.json")"
    stop_emulator
fi

printf 'bench-fetch: ratio=%.2f fetch_jobs_per_sec=%s curl_per_sec=%s wrk_per_sec=%s cpu_us_list=%s cpu_us_detail=%s cpu_us_search=%s rate_achieved=%s rate_error_pct=%s rate_429=%s\n' \
    "$(median "${ratios[@]}")" "$(median "${workers[@]}")" "$(median "${curls[@]}")" "$wrk_rate" \
    "${cpu[list]}" "${cpu[detail]}" "${cpu[search]}" "$rate_achieved" "$rate_error" "$rate_429"
