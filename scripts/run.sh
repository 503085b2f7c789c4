#!/usr/bin/env bash
# The main job (`make run`): the whole pipeline on this machine. Starts one process of every worker (more with
# FETCH_WORKERS / IMAGE_WORKERS / INDEX_WORKERS), the upstream emulator when no API key is set, enqueues a demo
# crawl, shows live progress until everything is drained, and prints a summary. Ctrl-C stops every process it
# started. The stack (broker) must be up: the Makefile starts it first.
#
# Settings (environment):
#   PAGES=3                     pages of each TMDB list (popular, now_playing) per language
#   LANGUAGES=ko-KR,en-US       TMDB languages
#   BOOKS_QUERY                 the Open Library search ("swift programming"; "night" on the emulator's catalogue)
#   FETCH_WORKERS=1 IMAGE_WORKERS=1 INDEX_WORKERS=1
#   MAX_WAIT=30m                give up when the crawl has not drained by then
#   KEEP_RUNNING=0              1: leave the workers running after the summary (Ctrl-C stops them)
#   RUN_LOGS=var/run            where the processes' logs (and the crawl's root job ids, roots.txt) go
#   METRICS_PORTS=9101,9102,9103  /metrics ports of the first fetch, image and index worker (0: any free port)
#   TMDB_API_KEY, KOFIC_API_KEY, KAKAO_REST_API_KEY (or *_FILE): the real APIs instead of the emulator
#   MARQUEE_STORE, MARQUEE_IMAGE_STORE, MARQUEE_BROKERS, MARQUEE_TOPIC_PREFIX as for the workers;
#   MARQUEE_GROUP_FETCH, MARQUEE_GROUP_IMAGES, MARQUEE_GROUP_RECORDS the workers' consumer groups
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bin=${BIN:-.build/debug}
pages=${PAGES:-3}
languages=${LANGUAGES:-ko-KR,en-US}
books_query=${BOOKS_QUERY:-}
fetch_workers=${FETCH_WORKERS:-1}
image_workers=${IMAGE_WORKERS:-1}
index_workers=${INDEX_WORKERS:-1}
max_wait=${MAX_WAIT:-30m}
logs=${RUN_LOGS:-var/run}
mkdir -p "$logs" var

export MARQUEE_BROKERS=${MARQUEE_BROKERS:-127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}}
export MARQUEE_TOPIC_PREFIX=${MARQUEE_TOPIC_PREFIX:-marquee.}
export MARQUEE_STORE=${MARQUEE_STORE:-sqlite:./var/marquee.db}
export MARQUEE_IMAGE_STORE=${MARQUEE_IMAGE_STORE:-file://./var/images}
export MARQUEE_LOG_LEVEL=${MARQUEE_LOG_LEVEL:-info}
export MARQUEE_RETRY_DELAYS=${MARQUEE_RETRY_DELAYS:-2s,10s,30s}
# The local test broker reports end offsets too low when a produce request carries several records
# (ENVIRONMENT.md): one record per request keeps lag exact. Production brokers need nothing of the sort.
if [[ -z "${MARQUEE_KAFKA_PROPERTIES:-}" && "$MARQUEE_BROKERS" == 127.0.0.1:* ]]; then
    export MARQUEE_KAFKA_PROPERTIES=batch.num.messages=1
fi

pids=()
stop_all() {
    trap - EXIT INT TERM
    if ((${#pids[@]})); then
        echo "Stopping ${#pids[@]} processes…" >&2
        kill -TERM "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
}
trap stop_all EXIT
trap 'echo; exit 130' INT TERM

start() { # name, log file, command…
    local name=$1 log=$2
    shift 2
    "$@" >>"$log" 2>&1 &
    pids+=($!)
    echo "started $name (pid $!, log $log)"
}

# The emulator stands in for the real APIs when no key is set.
has_key() { [[ -n "${!1:-}" || -n "$(eval echo "\${${1}_FILE:-}")" ]]; }
if has_key TMDB_API_KEY || has_key KOFIC_API_KEY || has_key KAKAO_REST_API_KEY; then
    echo "Using the real APIs (keys found in the environment)."
    books_query=${books_query:-swift programming}
else
    : >"$logs/upstream.out"
    "$bin/marquee-upstream" --port 0 --movies "${EMULATOR_MOVIES:-2000}" --books "${EMULATOR_BOOKS:-500}" \
        >"$logs/upstream.out" 2>"$logs/upstream.log" &
    pids+=($!)
    url=""
    for _ in $(seq 1 200); do # its first line says where it listens (up to 20 s)
        url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$logs/upstream.out" | head -1)
        [[ -n "$url" ]] && break
        kill -0 "${pids[-1]}" 2>/dev/null || { echo "marquee-upstream exited; see $logs/upstream.log" >&2; exit 1; }
        sleep 0.1
    done
    [[ -n "$url" ]] || { echo "marquee-upstream did not start; see $logs/upstream.log" >&2; exit 1; }
    echo "No API keys set: using the emulator at $url (marquee-upstream, log $logs/upstream.log)."
    export TMDB_API_KEY=marquee-emulator KOFIC_API_KEY=marquee-emulator KAKAO_REST_API_KEY=marquee-emulator
    export TMDB_BASE_URL=$url/tmdb/3 TMDB_IMAGE_BASE_URL=$url/tmdb-images/t/p
    export KOFIC_BASE_URL=$url/kofic/kobisopenapi/webservice/rest KAKAO_BASE_URL=$url/kakao
    export OPENLIBRARY_BASE_URL=$url/openlibrary OPENLIBRARY_COVERS_BASE_URL=$url/covers
    export MARQUEE_IMAGE_HOSTS=127.0.0.1 MARQUEE_ALLOW_PRIVATE_ADDRESSES=1
    export MARQUEE_FETCH_RATE_LIMITS=${MARQUEE_FETCH_RATE_LIMITS:-tmdb=200,kofic=50,kakao=50,openlibrary=50}
    books_query=${books_query:-night}
fi

"$bin/marquee" topics create >/dev/null
echo "Topics are ready (marquee topics list shows them)."

workers=""
start_workers() { # executable, count, default port, stage
    local program=$1 count=$2 port=$3 stage=$4
    for i in $(seq 1 "$count"); do
        local address=127.0.0.1:$((i == 1 ? port : 0))
        local group_variable=MARQUEE_GROUP_${stage^^}
        MARQUEE_METRICS_ADDRESS=$address MARQUEE_GROUP=${!group_variable:-marquee-$stage} \
            start "$program #$i" "$logs/$program-$i.log" "$bin/$program"
        if ((i == 1 && port != 0)); then workers+="${workers:+,}$stage=$address"; fi
    done
}
IFS=, read -r fetch_port image_port index_port <<<"${METRICS_PORTS:-9101,9102,9103}"
start_workers marquee-fetch "$fetch_workers" "$fetch_port" fetch
start_workers marquee-images "$image_workers" "$image_port" images
start_workers marquee-index "$index_workers" "$index_port" records
if [[ -n "$workers" ]]; then export MARQUEE_WORKERS=$workers; fi  # for marquee status

# The demo crawl; every root job id goes to var/run/roots.txt for the lineage.
yesterday=$(date -d yesterday +%F)
last_week=$(date -d '7 days ago' +%F)
roots=$logs/roots.txt
: >"$roots"
enqueue() { "$bin/marquee" enqueue "$@" >>"$roots"; }
echo "Enqueuing the demo crawl:"
enqueue tmdb-list popular --pages "1-$pages" --language "$languages" --details --reviews --images
enqueue tmdb-list now_playing --pages "1-$pages" --language "$languages" --details --reviews --images
enqueue kofic-daily --from "$yesterday" --details --images
enqueue kofic-weekly --from "$last_week" --details --images
enqueue openlibrary-search "$books_query" --details --images
echo

"$bin/marquee" drain --roots "$roots" --max-wait "$max_wait"
echo
if [[ "${KEEP_RUNNING:-0}" == 1 ]]; then
    echo "The workers keep running (marquee status, marquee lag); Ctrl-C stops them. Logs are in $logs/."
    wait
fi
echo "Logs are in $logs/."
