#!/usr/bin/env bash
# `make bench-backfill`: a full backfill from TMDB's daily id export, on this machine. The emulator serves an
# export of BENCH_MOVIES movies (rate limit off); `marquee enqueue tmdb-export --details` sends them with
# marquee-fetch and marquee-index running (images off, PostgreSQL store), release builds. Measured: ids enqueued
# per second (the enqueue command's own time), details stored per second (from the start of the enqueue to the
# last movie_details row), each process's peak RSS, and the fetch topic's largest backlog (the fetch group's lag,
# sampled every second with `marquee lag`). Side by side in the same run, the fetch worker's detail jobs per
# second alone (Benchmarks/FetchBenchmark, as `make bench-fetch` measures them, same concurrency).
# stored_ratio = details stored per second ÷ detail jobs per second alone: what the backfill keeps of the fetch
# worker's own pace. Goal: ≥ 0.8, and the backlog bounded by --max-backlog (BENCH_MAX_BACKLOG) plus one batch.
#
# Environment: BENCH_MOVIES (100000), BENCH_MAX_BACKLOG (5000), BENCH_RATE (0: no rate limit, the backlog bound
# paces), BENCH_CONCURRENCY (32, the fetch worker's and the benchmark's), BENCH_ALONE_JOBS (20000), MARQUEE_KAFKA_PORT
# (19092), MARQUEE_POSTGRES_PORT (15432). Needs the local stack (make up). The last line is machine-readable:
#   bench-backfill: stored_ratio=… enqueue_per_sec=… stored_per_sec=… peak_backlog=… peak_rss_mb_enqueue=…
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

movies=${BENCH_MOVIES:-100000}
max_backlog=${BENCH_MAX_BACKLOG:-5000}
rate=${BENCH_RATE:-0}
concurrency=${BENCH_CONCURRENCY:-32}
alone_jobs=${BENCH_ALONE_JOBS:-20000}
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"
pg_port=${MARQUEE_POSTGRES_PORT:-15432}
scratch="$root/.build-release"
bin="$scratch/release"
stamp=$(date +%s%N | cut -c1-13)
logs="$root/var/bench-backfill/run-$stamp"
mkdir -p "$logs"
say() { printf '\033[1mbench-backfill:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
for knob in movies concurrency alone_jobs; do
    [[ "${!knob}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_${knob^^} must be a positive number"
done
[[ "$max_backlog" =~ ^[0-9]+$ && "$rate" =~ ^[0-9]+$ ]] || die "BENCH_MAX_BACKLOG and BENCH_RATE must be numbers"
((movies <= 100000)) || die "BENCH_MOVIES may be at most 100000 (the emulator's largest catalogue)"

say "building the executables (release, scratch path .build-release)"
for product in marquee marquee-fetch marquee-index marquee-upstream FetchBenchmark; do
    swift build -c release --scratch-path "$scratch" --product "$product" >>"$logs/build.log" 2>&1 \
        || { tail -n 40 "$logs/build.log" >&2; die "the release build of $product failed"; }
done
scripts/stack.sh status >/dev/null || die "the local stack is not running: make up"

# CPU seconds a process has spent (with its reaped children: PostgreSQL's backends that have ended).
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' \
        "/proc/$1/stat" 2>/dev/null || echo 0
}
# PostgreSQL's CPU seconds: the postmaster, its reaped backends and the live ones.
postgres_cpu() {
    local main total
    main=$(ss -Hltnp "sport = :$pg_port" 2>/dev/null | grep -oE 'pid=[0-9]+' | head -n1 | cut -d= -f2)
    [[ -n "$main" ]] || { echo 0; return; }
    total=$(cpu_seconds "$main")
    for child in $(pgrep -P "$main"); do total=$(echo "$total + $(cpu_seconds "$child")" | bc -l); done
    echo "$total"
}
peak_rss_mb() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "DROP DATABASE IF EXISTS marquee_backfill_$stamp" \
        >/dev/null 2>&1 || true
}
trap cleanup EXIT

database=marquee_backfill_$stamp
psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "CREATE DATABASE $database" >/dev/null
export MARQUEE_BROKERS=$brokers MARQUEE_TOPIC_PREFIX=backfill$stamp. MARQUEE_TOPIC_PARTITIONS=8
export MARQUEE_METRICS_ADDRESS=127.0.0.1:0 MARQUEE_LOG_LEVEL=notice
export MARQUEE_GROUP_FETCH=backfill$stamp-fetch MARQUEE_GROUP_RECORDS=backfill$stamp-records
export MARQUEE_STORE="postgres://marquee@127.0.0.1:$pg_port/$database?sslmode=disable"

"$bin/marquee-upstream" --port 0 --movies "$movies" --books 10 >"$logs/upstream.out" 2>"$logs/upstream.log" &
pids+=($!)
upstream_pid=$!
url=""
for _ in $(seq 1 600); do
    url=$(grep -oE 'http://[0-9.]+:[0-9]+' "$logs/upstream.out" 2>/dev/null | head -n1 || true)
    [[ -n "$url" ]] && break
    sleep 0.1
done
[[ -n "$url" ]] || die "marquee-upstream did not start"
eval "$("$bin/marquee-upstream" --print-env --host 127.0.0.1 --port "${url##*:}")"
export MARQUEE_FETCH_RATE_LIMITS=tmdb=0
day=$(date -u +%F)
say "emulator at $url: an export of $movies movies (rate limit off); warming it (built on first request)"
curl -sf -o /dev/null "$TMDB_EXPORT_BASE_URL/movie_ids_$(date -u +%m_%d_%Y).json.gz" || die "the emulator serves no export"

"$bin/marquee" topics create >/dev/null
# The fetch worker runs as FetchBenchmark runs it alone: `concurrency` requests in flight to the emulator, six times
# as many jobs in the stage (parsing, or waiting for the broker's acknowledgement of their outputs). The settings
# are the fetch worker's only: the indexer's own default keeps a whole batch per writer in flight.
MARQUEE_CONCURRENCY=$((6 * concurrency)) MARQUEE_FETCH_PER_SOURCE_CONCURRENCY=$concurrency \
    MARQUEE_GROUP=$MARQUEE_GROUP_FETCH "$bin/marquee-fetch" >"$logs/fetch.log" 2>&1 &
fetch_pid=$!
pids+=($fetch_pid)
MARQUEE_GROUP=$MARQUEE_GROUP_RECORDS "$bin/marquee-index" >"$logs/index.log" 2>&1 &
index_pid=$!
pids+=($index_pid)
sleep 3  # the workers join their groups

# The fetch and records groups' lag, every second, until the sampler is stopped: one JSON report a line. One
# watching process, read once at the end: a new `marquee lag` and a Python interpreter every second cost about 5 % of
# the machine's CPU, taken from the processes measured.
"$bin/marquee" lag --stage fetch,records --watch --samples 1 --interval 1s --json >"$logs/lag.jsonl" 2>/dev/null &
sampler=$!
pids+=($sampler)

sql() { psql -qtA -h 127.0.0.1 -p "$pg_port" -U marquee -d "$database" -c "$1"; }
say "backfill: tmdb-export --details --rate $rate --max-backlog $max_backlog, fetch (concurrency $concurrency) and index running"
broker_pid=$(cat "$root/var/stack/tansu.pid" 2>/dev/null || echo 0)
cpu_snapshot() {
    echo "$(cpu_seconds "$fetch_pid") $(cpu_seconds "$index_pid") $(cpu_seconds "$upstream_pid") $(cpu_seconds "$broker_pid") $(postgres_cpu)"
}
read -r cpu0_fetch cpu0_index cpu0_upstream cpu0_broker cpu0_postgres < <(cpu_snapshot)
t0=$EPOCHREALTIME
/usr/bin/time -f "%M %U %S" -o "$logs/enqueue.rss" "$bin/marquee" enqueue tmdb-export --date "$day" --details --language en-US \
    --rate "$rate" --max-backlog "$max_backlog" --state "$logs/backfill.state" --quiet \
    >"$logs/enqueue.out" 2>"$logs/enqueue.log" || { cat "$logs/enqueue.log" >&2; die "the enqueue failed"; }
t1=$EPOCHREALTIME
jobs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"])' "$logs/backfill.state")
say "  $jobs jobs enqueued in $(printf '%.1f' "$(echo "$t1 - $t0" | bc -l)") s; waiting for the store"
waited=0
while true; do
    stored=$(sql "SELECT count(*) FROM movie_details")
    ((stored >= jobs)) && break
    ((waited++ < 1800)) || die "only $stored of $jobs details were stored after 30 minutes"
    sleep 1
done
t2=$EPOCHREALTIME
read -r cpu2_fetch cpu2_index cpu2_upstream cpu2_broker cpu2_postgres < <(cpu_snapshot)
kill "$sampler" 2>/dev/null || true
rss_fetch=$(peak_rss_mb "$fetch_pid")
rss_index=$(peak_rss_mb "$index_pid")
read -r enqueue_kb enqueue_user enqueue_system <"$logs/enqueue.rss"
rss_enqueue=$((enqueue_kb / 1024))
# cpu_ms START END [COUNT]: the CPU seconds from START to END as milliseconds a stored detail (or a COUNT). What
# a stored detail cost each process: their sum over the machine's cores is the floor of the time a detail takes
# here, whatever the pacing.
cpu_ms() { printf '%.3f' "$(echo "1000 * ($2 - $1) / ${3:-$stored}" | bc -l)"; }
cpu_fetch=$(cpu_ms "$cpu0_fetch" "$cpu2_fetch")
cpu_index=$(cpu_ms "$cpu0_index" "$cpu2_index")
cpu_upstream=$(cpu_ms "$cpu0_upstream" "$cpu2_upstream")
cpu_broker=$(cpu_ms "$cpu0_broker" "$cpu2_broker")
cpu_postgres=$(cpu_ms "$cpu0_postgres" "$cpu2_postgres")
cpu_enqueue=$(cpu_ms 0 "$(echo "$enqueue_user + $enqueue_system" | bc -l)")
cpu_total=$(echo "$cpu_fetch + $cpu_index + $cpu_upstream + $cpu_broker + $cpu_postgres + $cpu_enqueue" | bc -l)
floor_per_sec=$(echo "1000 * $(nproc) / $cpu_total" | bc -l)
kill -TERM "$fetch_pid" "$index_pid" 2>/dev/null || true
wait "$fetch_pid" "$index_pid" 2>/dev/null || true
# One line "fetch records" a sample.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        report = json.loads(line)
    except ValueError:
        continue  # the last line, cut when the sampler was stopped
    lags = {stage["stage"]: stage["totals"]["lag"] for stage in report["stages"]}
    print(lags.get("fetch", 0), lags.get("records", 0))' "$logs/lag.jsonl" >"$logs/backlog.txt"
peak_backlog=$(cut -d' ' -f1 "$logs/backlog.txt" | sort -n | tail -n1)
peak_records_backlog=$(cut -d' ' -f2 "$logs/backlog.txt" | sort -n | tail -n1)
enqueue_per_sec=$(echo "$jobs / ($t1 - $t0)" | bc -l)
stored_per_sec=$(echo "$stored / ($t2 - $t0)" | bc -l)

say "the fetch worker alone: $alone_jobs movie details, concurrency $concurrency (FetchBenchmark, as make bench-fetch)"
read -r alone0_upstream alone0_broker < <(echo "$(cpu_seconds "$upstream_pid") $(cpu_seconds "$broker_pid")")
/usr/bin/time -f "%U %S" -o "$logs/alone.cpu" \
    "$bin/FetchBenchmark" run --brokers "$brokers" --kind detail --count "$alone_jobs" --concurrency "$concurrency" \
    >"$logs/alone.log" 2>&1 || die "FetchBenchmark failed; see ${logs#"$root"/}/alone.log"
read -r alone2_upstream alone2_broker < <(echo "$(cpu_seconds "$upstream_pid") $(cpu_seconds "$broker_pid")")
read -r alone_user alone_system <"$logs/alone.cpu"
# CPU milliseconds a detail job cost alone (the benchmark, its seeding included, the emulator and the broker).
alone_bench=$(cpu_ms 0 "$(echo "$alone_user + $alone_system" | bc -l)" "$alone_jobs")
alone_upstream=$(cpu_ms "$alone0_upstream" "$alone2_upstream" "$alone_jobs")
alone_broker=$(cpu_ms "$alone0_broker" "$alone2_broker" "$alone_jobs")
alone_cpu=$(echo "$alone_bench + $alone_upstream + $alone_broker" | bc -l)
# When both runs are held by the CPU, stored_ratio cannot pass the ratio of their CPU costs.
cpu_ratio=$(echo "$alone_cpu / $cpu_total" | bc -l)
alone=$(grep -oE '(^| )jobs_per_sec=[0-9.]+' "$logs/alone.log" | tail -n1 | cut -d= -f2)
[[ -n "$alone" ]] || die "FetchBenchmark printed no rate; see ${logs#"$root"/}/alone.log"
ratio=$(echo "$stored_per_sec / $alone" | bc -l)

echo
echo "Backfill of $movies movies (PostgreSQL store, images off, this machine's $(nproc) cores):"
printf '  enqueue: %s jobs in %.1f s (%.0f ids/s), peak RSS %s MB\n' "$jobs" "$(echo "$t1 - $t0" | bc -l)" \
    "$enqueue_per_sec" "$rss_enqueue"
printf '  stored:  %s details in %.1f s (%.1f details/s); fetch peak RSS %s MB, index %s MB\n' "$stored" \
    "$(echo "$t2 - $t0" | bc -l)" "$stored_per_sec" "$rss_fetch" "$rss_index"
printf '  fetch topic backlog: at most %s jobs (bound %s; %s samples); records topic: at most %s records\n' \
    "$peak_backlog" "$max_backlog" "$(wc -l <"$logs/backlog.txt")" "$peak_records_backlog"
printf '  the fetch worker alone: %s detail jobs/s\n' "$alone"
printf '  CPU ms a stored detail: fetch %s, index %s, emulator %s, broker %s, PostgreSQL %s, enqueue %s; total %.3f\n' \
    "$cpu_fetch" "$cpu_index" "$cpu_upstream" "$cpu_broker" "$cpu_postgres" "$cpu_enqueue" "$cpu_total"
printf '  the CPU floor on %s cores: %.0f details/s (the rate at which the processes above would use every core)\n' \
    "$(nproc)" "$floor_per_sec"
printf '  CPU ms a detail job alone: FetchBenchmark %s, emulator %s, broker %s; total %.3f; ÷ the backfill'"'"'s: %.2f (the ratio'"'"'s ceiling when both are CPU-bound)\n' \
    "$alone_bench" "$alone_upstream" "$alone_broker" "$alone_cpu" "$cpu_ratio"
printf 'bench-backfill: stored_ratio=%.2f enqueue_per_sec=%.0f stored_per_sec=%.1f peak_backlog=%s peak_rss_mb_enqueue=%s peak_rss_mb_fetch=%s peak_rss_mb_index=%s alone_per_sec=%s cpu_ms_per_detail=%.3f floor_per_sec=%.0f cpu_ratio=%.2f\n' \
    "$ratio" "$enqueue_per_sec" "$stored_per_sec" "$peak_backlog" "$rss_enqueue" "$rss_fetch" "$rss_index" "$alone" \
    "$cpu_total" "$floor_per_sec" "$cpu_ratio"
