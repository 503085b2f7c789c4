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
#   METRICS_PORTS=f,i,r         /metrics ports of the first fetch, image and index worker (0: any free port;
#                               unset: each worker's own default, which `marquee status` reads by default too)
#   TMDB_API_KEY, KOFIC_API_KEY, KAKAO_REST_API_KEY (or *_FILE): the real APIs instead of the emulator
#   MARQUEE_STORE, MARQUEE_IMAGE_STORE, MARQUEE_BROKERS, MARQUEE_TOPIC_PREFIX as for the workers (unset: the
#   executables' own defaults; MARQUEE_KAFKA_PORT, the local stack's broker port, sets MARQUEE_BROKERS);
#   MARQUEE_GROUP_FETCH, MARQUEE_GROUP_IMAGES, MARQUEE_GROUP_RECORDS: each stage's consumer group, given to its
#   workers (as MARQUEE_GROUP) and to `marquee drain` alike; unset, both take the default, <prefix><stage>.
# Nothing here names a default of the executables' (group, topic, port, store): they come from the code, so the
# workers and the tools always agree.
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

# A PostgreSQL store on the local stack's port is started with it (scripts/stack.sh).
if [[ "${MARQUEE_STORE:-}" == postgres*@127.0.0.1:${MARQUEE_POSTGRES_PORT:-15432}/* ]]; then
    scripts/stack.sh up postgres >/dev/null
fi
# The local stack's broker port (scripts/stack.sh) picks the brokers when it is not the default.
if [[ -z "${MARQUEE_BROKERS:-}" && -n "${MARQUEE_KAFKA_PORT:-}" ]]; then
    export MARQUEE_BROKERS=127.0.0.1:$MARQUEE_KAFKA_PORT
fi
# One MARQUEE_GROUP for every worker would put the three stages in one group: each stage's comes from
# MARQUEE_GROUP_<STAGE>, which `marquee drain` reads too.
if [[ -n "${MARQUEE_GROUP:-}" ]]; then
    echo "MARQUEE_GROUP=$MARQUEE_GROUP is ignored here: set MARQUEE_GROUP_FETCH, MARQUEE_GROUP_IMAGES or" \
        "MARQUEE_GROUP_RECORDS to pick a stage's group for its workers and for marquee drain alike." >&2
    unset MARQUEE_GROUP
fi
export MARQUEE_RETRY_DELAYS=${MARQUEE_RETRY_DELAYS:-2s,10s,30s}
# The local test broker reports end offsets too low when a produce request carries several records
# (ENVIRONMENT.md): one record per request keeps lag exact. Production brokers need nothing of the sort. The
# default brokers are the local stack's.
if [[ -z "${MARQUEE_KAFKA_PROPERTIES:-}" && "${MARQUEE_BROKERS:-127.0.0.1:}" == 127.0.0.1:* ]]; then
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

# The workers, kept running like a process manager would: one that stops is reported and started again (an
# outage of a dependency pauses a stage instead; docs/stage.md, "A dependency down for everyone").
workers=""
slots=()  # "program|stage|address|index" per worker; worker_pids[] parallel to it
worker_pids=()
start_slot() { # slot index
    local program stage address index group_variable
    IFS='|' read -r program stage address index <<<"${slots[$1]}"
    group_variable=MARQUEE_GROUP_${stage^^}
    local settings=()
    # Unset, the worker takes its own default group and port, as `marquee drain` and `marquee status` do.
    [[ -n "${!group_variable:-}" ]] && settings+=("MARQUEE_GROUP=${!group_variable}")
    [[ -n "$address" ]] && settings+=("MARQUEE_METRICS_ADDRESS=$address")
    start "$program #$index" "$logs/$program-$index.log" env "${settings[@]}" "$bin/$program"
    worker_pids[$1]=${pids[-1]}
}
start_workers() { # executable, count, stage, port of the first (empty: its default)
    local program=$1 count=$2 stage=$3 port=$4
    for i in $(seq 1 "$count"); do
        local address=""
        if ((i > 1)); then address=127.0.0.1:0; elif [[ -n "$port" ]]; then address=127.0.0.1:$port; fi
        slots+=("$program|$stage|$address|$i")
        start_slot $((${#slots[@]} - 1))
        if [[ -n "${METRICS_PORTS:-}" ]] && ((i == 1 && port != 0)); then workers+="${workers:+,}$stage=$address"; fi
    done
}
supervise() { # restarts every worker that stopped
    for slot in "${!slots[@]}"; do
        local pid=${worker_pids[$slot]}
        kill -0 "$pid" 2>/dev/null && continue
        local status=0
        wait "$pid" 2>/dev/null || status=$?
        IFS='|' read -r program _ _ index <<<"${slots[$slot]}"
        echo "$program #$index stopped (exit status $status; see $logs/$program-$index.log): starting it again" >&2
        start_slot "$slot" >/dev/null
    done
}
IFS=, read -r fetch_port image_port index_port <<<"${METRICS_PORTS:-}"
start_workers marquee-fetch "$fetch_workers" fetch "$fetch_port"
start_workers marquee-images "$image_workers" images "$image_port"
start_workers marquee-index "$index_workers" records "$index_port"
if [[ -n "$workers" ]]; then export MARQUEE_WORKERS=$workers; fi  # for marquee status, when METRICS_PORTS moved them

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

"$bin/marquee" drain --roots "$roots" --max-wait "$max_wait" &
drain=$!
pids+=("$drain")
while kill -0 "$drain" 2>/dev/null; do
    supervise
    sleep 1
done
drained=0
wait "$drain" || drained=$?
echo
((drained == 0)) || exit "$drained"
if [[ "${KEEP_RUNNING:-0}" == 1 ]]; then
    echo "The workers keep running (marquee status, marquee lag); Ctrl-C stops them. Logs are in $logs/."
    while true; do
        supervise
        sleep 1
    done
fi
echo "Logs are in $logs/."
