#!/usr/bin/env bash
# `make bench-e2e`: the whole pipeline on this machine. A crawl of BENCH_MOVIES movies (TMDB popular lists with
# details, reviews and posters in the default variants) from marquee-upstream into PostgreSQL, release builds of
# every worker, once with one image worker and once with two. For each run: wall time, movies/s, each stage's
# throughput and which stage drained last (the bottleneck), and each worker's peak RSS. Side by side, in the same
# run, the imaging path alone (ImagingBenchmark, as in `make bench-images`) on the same posters the image worker
# downloaded, with the worker's configuration (a WebP and a JPEG fallback per width), and WebP only for reference.
# e2e_ratio = end-to-end movies/s (one image worker) ÷ imaging-alone posters/s: how much the rest of the pipeline
# (broker, fetch, index, emulator, all on the same cores) costs on top of its heaviest stage. Each run also prints
# where the machine's CPU went: each worker, the emulator, the broker, PostgreSQL, and the rest.
#
# Environment: BENCH_MOVIES (10000), BENCH_IMAGE_WORKERS ("1 2"), BENCH_SAMPLE (posters for the imaging-alone
# measurement, 400), BENCH_IMAGE_CONCURRENCY (jobs in flight per image worker; default: the worker's own).
# Needs the local stack (make up). The last line is machine-readable:
#   bench-e2e: e2e_ratio=… movies_per_sec=… movies_per_sec_2=… gain_2_image_workers=… imaging_per_sec=…
#              imaging_webp_per_sec=… bottleneck=…     (one line)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

movies=${BENCH_MOVIES:-10000}
image_counts=${BENCH_IMAGE_WORKERS:-1 2}
sample=${BENCH_SAMPLE:-400}
image_concurrency=${BENCH_IMAGE_CONCURRENCY:-}  # jobs in flight per image worker; empty: the worker's default
scratch="$root/.build-release"
bin="$scratch/release"
work="$root/var/bench-e2e"
pg_port=${MARQUEE_POSTGRES_PORT:-15432}
mkdir -p "$work"
say() { printf '\033[1mbench-e2e:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
[[ "$movies" =~ ^[1-9][0-9]*$ ]] && ((movies >= 20)) || die "BENCH_MOVIES must be a number of at least 20"
pages=$(((movies + 19) / 20))
((pages <= 500)) || die "BENCH_MOVIES may be at most 10000 (TMDB lists stop at page 500)"

say "building the executables (release, scratch path .build-release)"
for product in marquee marquee-fetch marquee-images marquee-index marquee-upstream ImagingBenchmark; do
    swift build -c release --scratch-path "$scratch" --product "$product" >>"$work/build.log" 2>&1 \
        || { tail -n 40 "$work/build.log" >&2; die "the release build failed"; }
done
scripts/stack.sh status >/dev/null || die "the local stack is not running: make up"

peak_rss_mb() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# CPU time in clock ticks: of one process (user + system), and of the whole machine (user, system, irq, softirq;
# not `nice`, so lowered-priority work of others on the machine is left out).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
machine_ticks() { awk '/^cpu / { print $2 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)
# The summed CPU ticks of a set of processes (the broker's; PostgreSQL's, whose backends come and go).
ticks_of() { local total=0 pid; for pid in "$@"; do total=$((total + $(cpu_ticks "$pid"))); done; echo "$total"; }
broker_pids() { pgrep -f "tansu broker --listener-url tcp://127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}" || true; }
postgres_pids() { # the server on our port and its backends
    local main; main=$(pgrep -f "postgres -D .* -p ${MARQUEE_POSTGRES_PORT:-15432} " | head -1)
    [[ -n "$main" ]] && { echo "$main"; pgrep -P "$main" || true; }
}

# One end-to-end run with $1 image workers; prints "seconds movies fetch_jobs image_jobs records bottleneck rss…".
run() {
    local image_workers=$1 stamp; stamp=$(date +%s%N | cut -c1-13)
    local logs="$work/run-$stamp"
    mkdir -p "$logs"
    local database=marquee_bench_$stamp
    psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "CREATE DATABASE $database" >/dev/null
    (
        export MARQUEE_TOPIC_PREFIX=bench$stamp. MARQUEE_TOPIC_PARTITIONS=8 MARQUEE_METRICS_ADDRESS=127.0.0.1:0
        for stage in FETCH IMAGES RECORDS; do export "MARQUEE_GROUP_$stage=bench$stamp-${stage,,}"; done
        export MARQUEE_STORE="postgres://marquee@127.0.0.1:$pg_port/$database?sslmode=disable"
        export MARQUEE_IMAGE_STORE="file://$logs/images" MARQUEE_LOG_LEVEL=notice
        "$bin/marquee-upstream" --port 0 --movies "$movies" --books 10 >"$logs/upstream.out" 2>"$logs/upstream.log" &
        local upstream=$! url=""
        for _ in $(seq 1 300); do
            url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$logs/upstream.out" | head -1)
            [[ -n "$url" ]] && break
            sleep 0.1
        done
        [[ -n "$url" ]] || die "marquee-upstream did not start"
        export TMDB_API_KEY=marquee-emulator KOFIC_API_KEY=marquee-emulator KAKAO_REST_API_KEY=marquee-emulator
        export TMDB_BASE_URL=$url/tmdb/3 TMDB_IMAGE_BASE_URL=$url/tmdb-images/t/p
        export MARQUEE_IMAGE_HOSTS=127.0.0.1 MARQUEE_ALLOW_PRIVATE_ADDRESSES=1 MARQUEE_FETCH_RATE_LIMITS=tmdb=0
        "$bin/marquee" topics create >/dev/null
        local pids=() names=()
        start() { MARQUEE_GROUP=$2 "$bin/$1" >>"$logs/$1-${#pids[@]}.log" 2>&1 & pids+=($!); names+=("$1"); }
        start marquee-fetch "$MARQUEE_GROUP_FETCH"
        for _ in $(seq 1 "$image_workers"); do
            MARQUEE_CONCURRENCY=$image_concurrency start marquee-images "$MARQUEE_GROUP_IMAGES"
        done
        start marquee-index "$MARQUEE_GROUP_RECORDS"
        local t0=$EPOCHREALTIME m0 b0 p0; m0=$(machine_ticks)
        b0=$(ticks_of $(broker_pids)); p0=$(ticks_of $(postgres_pids))
        "$bin/marquee" enqueue tmdb-list popular --pages "1-$pages" --language en-US --details --reviews --images \
            >"$logs/roots.txt" 2>>"$logs/enqueue.log"
        "$bin/marquee" drain --roots "$logs/roots.txt" --max-wait 2h --interval 1s --settle 2 >"$logs/drain.out" 2>&1 \
            || die "the crawl did not drain ($logs/drain.out)"
        local t1=$EPOCHREALTIME m1 b1 p1; m1=$(machine_ticks)
        b1=$(ticks_of $(broker_pids)); p1=$(ticks_of $(postgres_pids))
        local rss="" cpu="" ours=0 ticks
        for index in "${!pids[@]}"; do rss+="${names[$index]}=$(peak_rss_mb "${pids[$index]}")MB "; done
        # Where the machine's CPU went during the crawl: each worker, the emulator, the broker, PostgreSQL, and
        # the rest (the CLI, the system).
        for index in "${!pids[@]}"; do
            ticks=$(cpu_ticks "${pids[$index]}"); ours=$((ours + ticks))
            cpu+="${names[$index]}=$(echo "scale=1; $ticks / $hz" | bc)s "
        done
        ticks=$(cpu_ticks "$upstream"); ours=$((ours + ticks))
        cpu+="marquee-upstream=$(echo "scale=1; $ticks / $hz" | bc)s "
        ours=$((ours + b1 - b0 + p1 - p0))
        cpu+="broker=$(echo "scale=1; ($b1 - $b0) / $hz" | bc)s postgres=$(echo "scale=1; ($p1 - $p0) / $hz" | bc)s "
        cpu+="rest=$(echo "scale=1; ($m1 - $m0 - $ours) / $hz" | bc)s"
        kill -TERM "${pids[@]}" "$upstream" 2>/dev/null || true
        wait "${pids[@]}" "$upstream" 2>/dev/null || true
        sql() { psql -qtA -h 127.0.0.1 -p "$pg_port" -U marquee -d "$database" -c "$1"; }
        local stored; stored=$(sql "SELECT count(*) FROM movies")
        # Each stage's throughput over its own active span, and the stage that finished last.
        local stages; stages=$(sql "SELECT stage || ':' || count(*) || ':' || (max(fetched_at) - min(fetched_at)) FROM job_outcomes WHERE outcome = 'done' GROUP BY stage ORDER BY max(fetched_at)" | paste -sd ' ')
        local records; records=$(sql "SELECT (SELECT count(*) FROM movies) + (SELECT count(*) FROM reviews) + (SELECT count(*) FROM images) + (SELECT count(*) FROM movie_translations)")
        sql "SELECT source_url FROM entity_images WHERE role = 'poster' ORDER BY source_url LIMIT $sample" >"$logs/posters.txt"
        sql "SELECT coalesce(downloaded_url, source_url) FROM entity_images WHERE role = 'poster' ORDER BY source_url LIMIT $sample" >"$logs/downloaded.txt"
        psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "DROP DATABASE $database" >/dev/null 2>&1 || true
        rm -rf "$logs/images"  # a 10,000-movie crawl stores about 1 GB of variants; the measurement is done
        local seconds; seconds=$(echo "$t1 - $t0" | bc -l)
        echo "$seconds $stored $records $logs|$stages|$rss|$cpu"
    )
}

results=()
for count in $image_counts; do
    say "crawling $movies movies ($pages list pages, details, reviews, posters) with $count image worker(s)"
    results+=("$(run "$count")")
    say "  ${results[-1]%%|*}"
done

# The imaging path alone, on posters the image worker downloaded (the same renditions), with every core.
first_logs=$(echo "${results[0]}" | awk '{print $4}' | cut -d'|' -f1)
posters="$work/posters"
rm -rf "$posters" && mkdir -p "$posters"
say "imaging alone: downloading $(wc -l <"$first_logs/downloaded.txt") posters the workers processed"
"$bin/marquee-upstream" --port 0 --movies "$movies" --books 10 >"$work/upstream.out" 2>/dev/null &
upstream=$!
url=""
for _ in $(seq 1 300); do url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$work/upstream.out" | head -1); [[ -n "$url" ]] && break; sleep 0.1; done
index=0
while read -r poster; do
    # The stored URL names the run's emulator; the same catalogue (same seed and size) serves the same bytes.
    path=${poster#http://*/}
    curl -sf "$url/$path" -o "$posters/$(printf '%05d' $index).jpg" || true
    index=$((index + 1))
done <"$first_logs/downloaded.txt"
kill "$upstream" 2>/dev/null || true
# Twice: with the image worker's own configuration (a WebP and a JPEG fallback per width: the work the worker
# did on each poster, so the ratio compares like with like), and WebP only, as `make bench-images` measures.
imaging_alone() { # extra flags…
    rm -rf "$work/variants" && mkdir -p "$work/variants"
    "$bin/ImagingBenchmark" run --input "$posters" --out "$work/variants" "$@" 2>&1 | tail -1
}
rate_of() { sed -n 's/.*posters_per_sec=\([0-9.]*\).*/\1/p' <<<"$1"; }
imaging=$(imaging_alone --jpeg-fallback)
imaging_per_sec=$(rate_of "$imaging")
[[ -n "$imaging_per_sec" ]] || die "ImagingBenchmark printed no rate: $imaging"
imaging_webp=$(imaging_alone)
imaging_webp_per_sec=$(rate_of "$imaging_webp")
[[ -n "$imaging_webp_per_sec" ]] || die "ImagingBenchmark printed no rate: $imaging_webp"
rm -rf "$work/variants"

echo
echo "End to end, $movies movies (PostgreSQL store, file:// images, this machine's $(nproc) cores):"
per_sec=()
for index in "${!results[@]}"; do
    read -r seconds stored records _ <<<"${results[$index]%%|*}"
    stages=$(echo "${results[$index]}" | cut -d'|' -f2)
    rss=$(echo "${results[$index]}" | cut -d'|' -f3)
    rate=$(echo "$stored / $seconds" | bc -l)
    per_sec+=("$rate")
    printf '  %s image worker(s): %.1f s, %s movies stored (%.1f movies/s), %s rows\n' \
        "$(echo "$image_counts" | awk -v i=$((index + 1)) '{print $i}')" "$seconds" "$stored" "$rate" "$records"
    for stage in $stages; do
        IFS=: read -r name jobs span <<<"$stage"
        printf '      %-8s %6d jobs  %7.1f jobs/s\n' "$name" "$jobs" "$(echo "$jobs / (($span + 1) / 1000)" | bc -l)"
    done
    last=${stages##* }
    echo "      drained last: ${last%%:*} (the indexer reports no job outcomes; its rows: ${records} in all)"
    echo "      peak RSS: $rss"
    echo "      CPU: $(echo "${results[$index]}" | cut -d'|' -f4) (the rest: the CLI, the system)"
done
bottleneck=$(echo "${results[0]}" | cut -d'|' -f2 | awk '{print $NF}' | cut -d: -f1)
ratio=$(echo "${per_sec[0]} / $imaging_per_sec" | bc -l)
gain=$([[ ${#per_sec[@]} -gt 1 ]] && echo "${per_sec[1]} / ${per_sec[0]}" | bc -l || echo 1)
printf '  imaging alone, as the worker (WebP + JPEG per width): %.1f posters/s (%s)\n' "$imaging_per_sec" "$imaging"
printf '  imaging alone, WebP only (as make bench-images):      %.1f posters/s (%s)\n' "$imaging_webp_per_sec" "$imaging_webp"
printf 'bench-e2e: e2e_ratio=%.2f movies_per_sec=%.1f movies_per_sec_2=%.1f gain_2_image_workers=%.2f imaging_per_sec=%.1f imaging_webp_per_sec=%.1f bottleneck=%s\n' \
    "$ratio" "${per_sec[0]}" "${per_sec[1]:-0}" "$gain" "$imaging_per_sec" "$imaging_webp_per_sec" "$bottleneck"
