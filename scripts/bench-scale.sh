#!/usr/bin/env bash
# `make bench-scale`: how the fetch workers' TMDB rate limit holds as the stage scales out. Rounds of 1, 2 and 4
# `marquee-fetch` processes (release builds), all with the same key and the same limit (MARQUEE_FETCH_RATE_LIMITS
# tmdb=BENCH_RATE, shared through the store with MARQUEE_SHARED_LIMITS=store), against `marquee-upstream
# --rate-limit BENCH_RATE`, which answers 429 past that rate per key. Each round fetches BENCH_JOBS TMDB movie
# details (no follow-ups) and reads from the emulator's /_stats:
#   - accepted req/s = (tmdb requests - 429s - 1) / (last - first), from `timing.tmdb` (arrival times of the first
#     and last TMDB request) and `rateLimited.tmdb`: the rate of requests the limit let through;
#   - utilisation = accepted req/s / BENCH_RATE: 1 when the workers together use the whole limit, below 1 when
#     they leave part of it unused (a limit split too finely, or waits after 429s); a little above 1 when they
#     spend the emulator's burst (its bucket starts full, BENCH_RATE tokens) on top of the rate;
#   - the 429s (requests over the limit) and the most TMDB requests in any one second.
# A cluster-wide limit shows utilisation near 1 and no 429s at every worker count.
#
# Each round gets a fresh topic prefix (topics from `marquee topics create`, BENCH_PARTITIONS partitions), consumer
# group and SQLite store (var/bench-scale/round-N.db); the emulator's counters and rate-limit buckets are reset.
# Jobs are enqueued only once every worker has its partitions: a rebalance during the round would leave gaps that
# are not the limiter's doing. Readiness is read from the workers' own log lines ("partitions assigned: …" and
# "partitions revoked: …", replayed in order): every worker holds main-topic partitions, none twice, all of them.
#
# Environment: BENCH_JOBS (2000), BENCH_RATE (50), BENCH_WORKERS ("1 2 4"), BENCH_PARTITIONS (8),
# BENCH_RETRY_DELAYS (the workers' MARQUEE_RETRY_DELAYS, 1s,2s,4s: a job answered 429 waits in a retry tier, and
# the production delays, up to 10 minutes, would make a round over the limit measure the delays),
# BENCH_JOIN_SECONDS (90: the bound on the group's forming), MARQUEE_KAFKA_PORT (19092). Logs in var/bench-scale/.
# The last line is machine-readable:
#   bench-scale: util_1=… util_2=… util_4=… r429=… peak_per_sec=…
# (one util_N per worker count; r429 sums the rounds' 429s, peak_per_sec is the highest over the rounds).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

jobs="${BENCH_JOBS:-2000}"
rate="${BENCH_RATE:-50}"
worker_counts="${BENCH_WORKERS:-1 2 4}"
partitions="${BENCH_PARTITIONS:-8}"
retry_delays="${BENCH_RETRY_DELAYS:-1s,2s,4s}"
join_seconds="${BENCH_JOIN_SECONDS:-90}"
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"
scratch="$root/.build-release"
bin="$scratch/release"
logs="$root/var/bench-scale"
mkdir -p "$logs"

say() { printf '\033[1mbench-scale:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for knob in jobs rate partitions join_seconds; do
    [[ "${!knob}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_${knob^^} must be a positive number"
done
((jobs <= 10000)) || die "BENCH_JOBS may be at most 10000 (the ids come from TMDB's popular list, 500 pages of 20)"
[[ -n "${worker_counts// /}" ]] || die "BENCH_WORKERS must name at least one worker count"
for count in $worker_counts; do
    [[ "$count" =~ ^[1-9][0-9]*$ ]] || die "BENCH_WORKERS must be positive numbers (got '$count')"
    ((count <= partitions)) || die "BENCH_WORKERS: $count workers need at least $count partitions (BENCH_PARTITIONS=$partitions)"
done
[[ "$retry_delays" =~ ^[0-9]+(ms|s|m)(,[0-9]+(ms|s|m))*$ ]] || die "BENCH_RETRY_DELAYS must be durations like 1s,2s,4s"
for tool in curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
# Logs of an earlier run would be read as this run's (the readiness check reads the workers' logs).
rm -f "$logs"/round-*

started=0
emulator=""
workers=()
stop_workers() {
    local pid waited
    for pid in "${workers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${workers[@]}"; do
        waited=0
        while kill -0 "$pid" 2>/dev/null && ((waited++ < 300)); do sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            say "warning: worker $pid did not stop within 30 s of SIGTERM; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    workers=()
}
cleanup() {
    stop_workers
    if [ -n "$emulator" ]; then kill "$emulator" 2>/dev/null || true; wait "$emulator" 2>/dev/null || true; fi
    if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# Only the broker is needed (the store is SQLite).
if ! (exec 3<>"/dev/tcp/${brokers%:*}/${brokers##*:}") 2>/dev/null; then
    say "starting the local stack (stopped again at the end)"
    scripts/stack.sh up >/dev/null
    started=1
fi

say "building marquee, marquee-fetch and marquee-upstream (release, scratch path .build-release)"
for product in marquee marquee-fetch marquee-upstream; do
    if ! swift build -c release --scratch-path "$scratch" --product "$product" >"$logs/build-$product.log" 2>&1; then
        tail -n 40 "$logs/build-$product.log" >&2
        die "the build of $product failed; see var/bench-scale/build-$product.log"
    fi
done

# --- the emulator, and the jobs ---------------------------------------------------------------------------------
# Adult titles are left out of the lists: a quarter more movies than jobs leaves enough listed ones.
movies=$((jobs + jobs / 4 + 100))
rm -f "$logs/emulator.out"  # the wait below must not read an earlier run's listening line
"$bin/marquee-upstream" --port 0 --seed 7 --movies "$movies" --books 10 --rate-limit "$rate" \
    >"$logs/emulator.out" 2>"$logs/emulator.log" &
emulator=$!
waited=0
until grep -q '"listening"' "$logs/emulator.out" 2>/dev/null; do
    kill -0 "$emulator" 2>/dev/null || die "the emulator exited; see var/bench-scale/emulator.log"
    ((waited++ < 300)) || die "the emulator did not start in 30 s"
    sleep 0.1
done
url="$(grep -oE 'http://[0-9.]+:[0-9]+' "$logs/emulator.out" | head -n1)"
# TMDB_BASE_URL and the other base URLs and keys, for the workers.
eval "$("$bin/marquee-upstream" --print-env --host 127.0.0.1 --port "${url##*:}")"

say "emulator at $url ($movies movies, limit $rate req/s per key); collecting $jobs movie ids from its popular list"
# Real ids from the list pages, paced by the emulator's own limit (a 429 is waited out, as its Retry-After says).
python3 - "$url" "$TMDB_API_KEY" "$jobs" >"$logs/jobs.jsonl" 2>"$logs/jobs.log" <<'EOF' || die "could not collect the movie ids; see var/bench-scale/jobs.log"
import json, sys, time, urllib.error, urllib.request
url, key, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3])
ids, page, deadline = [], 1, time.monotonic() + 300
while len(ids) < wanted and page <= 500 and time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(f"{url}/tmdb/3/movie/popular?api_key={key}&language=en-US&page={page}", timeout=10) as reply:
            results = json.load(reply)["results"]
    except urllib.error.HTTPError as error:
        if error.code != 429:
            raise
        time.sleep(float(error.headers.get("Retry-After", "1")))
        continue
    if not results:
        break
    ids += [movie["id"] for movie in results]
    page += 1
if len(ids) < wanted:
    sys.exit(f"only {len(ids)} movie ids in the popular list, {wanted} wanted")
for id in ids[:wanted]:
    print(json.dumps({"v": 1, "kind": "tmdb.movie", "id": id, "language": "en-US"}, separators=(",", ":")))
EOF
[ "$(wc -l <"$logs/jobs.jsonl")" = "$jobs" ] || die "var/bench-scale/jobs.jsonl holds $(wc -l <"$logs/jobs.jsonl") jobs, not $jobs"

# --- helpers ----------------------------------------------------------------------------------------------------
control() { curl --silent --show-error --fail --max-time 10 -X POST "$url$1" ${2:+--data "$2"} >/dev/null; }

# Whether the group has formed: every worker holds main-topic partitions (its "partitions assigned"/"revoked"
# lines replayed in order), no partition is held twice, and together they hold all of them. Prints what each
# worker holds either way; exit 0 when formed.
group_formed() { # prefix log…
    python3 - "$1" "$partitions" "${@:2}" <<'EOF'
import json, re, sys
prefix, partitions, logs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
main = re.compile(r"(?<![\w.-])" + re.escape(prefix + "fetch") + r"\[(\d+)\]")
held = []
for log in logs:
    current = set()
    with open(log, errors="replace") as lines:
        for line in lines:
            if "partitions assigned:" not in line and "partitions revoked:" not in line:
                continue
            try:
                message = json.loads(line).get("msg", "")
            except ValueError:
                continue
            found = {int(number) for number in main.findall(message)}
            if message.startswith("partitions assigned:"):
                current |= found
            elif message.startswith("partitions revoked:"):
                current -= found
    held.append(current)
print(" ".join(f"worker{index + 1}={','.join(map(str, sorted(current)))}" for index, current in enumerate(held)))
every = set().union(*held)
formed = all(held) and sum(map(len, held)) == partitions and every == set(range(partitions))
sys.exit(0 if formed else 1)
EOF
}

# Succeeded plus dead-lettered fetch jobs, summed over the workers' /metrics: every job that reached its end.
finished_jobs() { # metrics-url…
    local total=0 url count
    for url in "$@"; do
        count=$(curl --silent --max-time 5 "$url" | awk '
            /^marquee_stage_jobs_total\{/ && /stage="fetch"/ && /outcome="(succeeded|dead_lettered)"/ { sum += $NF }
            END { printf "%d", sum }') || count=0
        total=$((total + ${count:-0}))
    done
    echo "$total"
}

# The round's numbers from a /_stats document: answered, accepted req/s, offered req/s, 429s, peak, span.
round_numbers() { # stats.json
    python3 - "$1" "$rate" <<'EOF'
import json, sys
stats, rate = json.load(open(sys.argv[1])), float(sys.argv[2])
timing = stats.get("timing", {}).get("tmdb", {"requests": 0, "first": 0, "last": 0})
requests, span = timing["requests"], timing["last"] - timing["first"]
limited = stats.get("rateLimited", {}).get("tmdb", 0)
answered = stats.get("routeStatuses", {}).get("tmdb.movie", {}).get("200", 0)
accepted = (requests - limited - 1) / span if span > 0 else 0
offered = (requests - 1) / span if span > 0 else 0
peak = stats.get("maxRequestsPerSecondByUpstream", {}).get("tmdb", 0)
print(f"{answered} {accepted:.2f} {offered:.2f} {accepted / rate:.3f} {limited} {peak} {span:.2f} {requests}")
EOF
}

# --- the rounds -------------------------------------------------------------------------------------------------
# A round's bound: the jobs at the limit's pace, three times over, plus a minute for retries and stragglers.
max_wait=$((jobs * 3 / rate + 60))
say "rounds of $jobs movie details with $worker_counts worker(s), $partitions partitions; logs in var/bench-scale/"
summary=""
total_429=0
peak_max=0
for count in $worker_counts; do
    stamp=$(date +%s%N | cut -c1-13)
    prefix="benchscale-$stamp."
    store="$logs/round-$count.db"
    rm -f "$store" "$store-wal" "$store-shm"
    export MARQUEE_BROKERS="$brokers" MARQUEE_TOPIC_PREFIX="$prefix" MARQUEE_TOPIC_PARTITIONS="$partitions"
    export MARQUEE_RETRY_DELAYS="$retry_delays" MARQUEE_GROUP="benchscale-$stamp-fetch"
    "$bin/marquee" topics create >"$logs/round-$count-topics.log" 2>&1 \
        || die "marquee topics create failed; see var/bench-scale/round-$count-topics.log"

    worker_logs=()
    for index in $(seq 1 "$count"); do
        log="$logs/round-$count-worker-$index.log"
        worker_logs+=("$log")
        MARQUEE_SESSION_TIMEOUT=6s MARQUEE_SHUTDOWN_TIMEOUT=5s MARQUEE_METRICS_ADDRESS=127.0.0.1:0 \
            MARQUEE_LOG_LEVEL=info MARQUEE_ALLOW_PRIVATE_ADDRESSES=1 MARQUEE_IMAGE_HOSTS=127.0.0.1 \
            MARQUEE_FETCH_RATE_LIMITS="tmdb=$rate" MARQUEE_SHARED_LIMITS=store MARQUEE_STORE="sqlite:$store" \
            "$bin/marquee-fetch" >"$log" 2>&1 &
        workers+=("$!")
    done

    # The group: every worker with its share of the partitions, before any job is sent.
    waited=0
    until held=$(group_formed "$prefix" "${worker_logs[@]}"); do
        for index in "${!workers[@]}"; do
            kill -0 "${workers[$index]}" 2>/dev/null || {
                tail -n 20 "${worker_logs[$index]}" >&2
                die "worker $((index + 1)) of $count exited; see ${worker_logs[$index]#"$root"/}"
            }
        done
        ((waited++ < join_seconds * 2)) || die "the group of $count worker(s) did not form within ${join_seconds}s ($held); see var/bench-scale/round-$count-worker-*.log"
        sleep 0.5
    done
    metrics=()
    for log in "${worker_logs[@]}"; do
        metrics+=("$(grep -m1 '"fetch worker started"' "$log" | grep -oE 'http://[0-9.]+:[0-9]+/metrics' | head -n1 || true)")
        [ -n "${metrics[-1]}" ] || die "${log#"$root"/} names no metrics address (no \"fetch worker started\" line)"
    done
    say "  $count worker(s) joined: $held"

    control /_stats/reset || die "POST /_stats/reset failed"
    control /_control '{"resetRateLimits": true}' || die "POST /_control failed"
    "$bin/marquee" enqueue --file - <"$logs/jobs.jsonl" >"$logs/round-$count-roots.txt" 2>"$logs/round-$count-enqueue.log" \
        || die "marquee enqueue failed; see var/bench-scale/round-$count-enqueue.log"

    # Until every job ended, succeeded or dead-lettered, by the workers' metrics: the fetch stage drained, and
    # each success was answered by the emulator before it was counted.
    waited=0
    until finished=$(finished_jobs "${metrics[@]}"); ((finished >= jobs)); do
        for index in "${!workers[@]}"; do
            kill -0 "${workers[$index]}" 2>/dev/null || {
                tail -n 20 "${worker_logs[$index]}" >&2
                die "worker $((index + 1)) of $count exited during the round; see ${worker_logs[$index]#"$root"/}"
            }
        done
        if ((waited++ >= max_wait * 2)); then
            curl --silent --max-time 5 "$url/_stats" >"$logs/round-$count-stats.json" || true
            read -r answered _ <<<"$(round_numbers "$logs/round-$count-stats.json" 2>/dev/null || echo "?")"
            die "round of $count worker(s): $finished of $jobs jobs finished, $answered details answered 200, after ${max_wait}s"
        fi
        sleep 0.5
    done
    curl --silent --fail --max-time 5 "$url/_stats" >"$logs/round-$count-stats.json" || die "the emulator's /_stats did not answer"
    stop_workers

    read -r answered accepted offered util limited peak span requests <<<"$(round_numbers "$logs/round-$count-stats.json")"
    [ "$answered" -ge "$jobs" ] || say "  warning: only $answered of $jobs details answered 200 (the rest were dead-lettered)"
    printf 'workers=%d: %d TMDB requests in %.1f s, accepted %.1f req/s (utilisation %s of %d), offered %.1f req/s, %d answered 429, peak %d in one second\n' \
        "$count" "$requests" "$span" "$accepted" "$util" "$rate" "$offered" "$limited" "$peak"
    summary+="util_$count=$util "
    total_429=$((total_429 + limited))
    ((peak > peak_max)) && peak_max=$peak
done

printf 'bench-scale: %sr429=%d peak_per_sec=%d\n' "$summary" "$total_429" "$peak_max"
