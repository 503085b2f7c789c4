#!/usr/bin/env bash
# The fault run (`make fault-run`; CI runs it in its short form): a crawl against marquee-upstream with its faults
# on (5xx, 429, timeouts, resets, malformed JSON, truncated images) while a chaos driver kill -9s a random worker
# every few seconds and restarts it, freezes the broker (SIGSTOP) for OUTAGE seconds and thaws it, stops
# PostgreSQL for OUTAGE seconds and starts it again, and later freezes PostgreSQL (SIGSTOP: its connections stay
# open and nothing answers) for OUTAGE seconds. Then, from the job-outcome lineage: every enqueued job and
# every job it spawned is accounted for — done, or dead-lettered with a reason; none lost; no duplicate rows; every
# stage drained to zero lag. It prints a report and exits 1 when a check fails. After the faults, a stage the test
# broker's group livelock holds (members, lag, no assignment for 60 s) is emptied for 20 s and started again.
#
# Needs the local stack started by scripts/stack.sh (it signals the broker and stops PostgreSQL), and a build.
#
# Settings (environment):
#   FAULT_SHORT=1               the short form (default with CI=true): ~400 fetch jobs, 60 s of chaos
#   FAULT_PAGES                 TMDB popular pages, each a list job that spawns 20 fetch jobs, its movies' details
#                               (short 10, long 500: with the box office and the book search, over 10,000 fetch jobs)
#   CHAOS_SECONDS               how long faults are injected (short 60, long 300)
#   KILL_EVERY=4                seconds between kill -9s
#   OUTAGE=10                   seconds of each broker and PostgreSQL outage
#   FETCH_WORKERS=2 IMAGE_WORKERS=1 INDEX_WORKERS=1
#   MAX_WAIT=30m                how long the crawl may take to drain after the faults
#   MARQUEE_VALIDATOR_CACHE     the fetch workers' validator cache (default store, as deployed)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bin=${BIN:-.build/debug}
short=${FAULT_SHORT:-$([[ "${CI:-}" == true ]] && echo 1 || echo 0)}
pages=${FAULT_PAGES:-$((short == 1 ? 10 : 500))}
chaos_seconds=${CHAOS_SECONDS:-$((short == 1 ? 60 : 300))}
kill_every=${KILL_EVERY:-4}
outage=${OUTAGE:-10}
stamp=$(date +%s)
logs=${RUN_LOGS:-var/fault-run/$stamp}
mkdir -p "$logs"
started_at=$SECONDS

export MARQUEE_BROKERS=127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}
export MARQUEE_TOPIC_PREFIX=fault$stamp.
for stage in FETCH IMAGES RECORDS; do export "MARQUEE_GROUP_$stage=fault$stamp-${stage,,}"; done
export MARQUEE_RETRY_DELAYS=${MARQUEE_RETRY_DELAYS:-1s,5s,15s}
export MARQUEE_TOPIC_PARTITIONS=${MARQUEE_TOPIC_PARTITIONS:-4}
export MARQUEE_SESSION_TIMEOUT=6s MARQUEE_SHUTDOWN_TIMEOUT=10s MARQUEE_STORE_TIMEOUT=5
# One record per produce request: the test broker reports end offsets too low otherwise (ENVIRONMENT.md).
export MARQUEE_KAFKA_PROPERTIES=batch.num.messages=1
export MARQUEE_METRICS_ADDRESS=127.0.0.1:0
pg_port=${MARQUEE_POSTGRES_PORT:-15432}
database=marquee_fault_$stamp
psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "CREATE DATABASE $database" >/dev/null
export MARQUEE_STORE="postgres://marquee@127.0.0.1:$pg_port/$database?sslmode=disable"
export MARQUEE_IMAGE_STORE=file://$root/$logs/images
# As deployed (deploy/base/config.env, docker-compose.yml): validators in the store, shared by the fetch workers
# and kept across their kill -9s, so a redelivered job can meet the validators of its own first run.
export MARQUEE_VALIDATOR_CACHE=${MARQUEE_VALIDATOR_CACHE:-store}
sql() { psql -qtA -h 127.0.0.1 -p "$pg_port" -U marquee -d "$database" -c "$1"; }
source "$root/scripts/fault-lineage.sh"

# The upstream, faults on.
"$bin/marquee-upstream" --port 0 --movies 20000 --books 500 --fault-5xx 0.04 --fault-429 0.02 --fault-timeout 0.003 \
    --fault-reset 0.02 --fault-malformed 0.01 --fault-truncated-image 0.03 >"$logs/upstream.out" 2>"$logs/upstream.log" &
upstream=$!
url=""
for _ in $(seq 1 200); do
    url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$logs/upstream.out" | head -1)
    [[ -n "$url" ]] && break
    sleep 0.1
done
[[ -n "$url" ]] || { echo "fault run: marquee-upstream did not start ($logs/upstream.log)" >&2; exit 1; }
export TMDB_API_KEY=marquee-emulator KOFIC_API_KEY=marquee-emulator KAKAO_REST_API_KEY=marquee-emulator
export TMDB_BASE_URL=$url/tmdb/3 TMDB_IMAGE_BASE_URL=$url/tmdb-images/t/p
export KOFIC_BASE_URL=$url/kofic/kobisopenapi/webservice/rest KAKAO_BASE_URL=$url/kakao
export OPENLIBRARY_BASE_URL=$url/openlibrary OPENLIBRARY_COVERS_BASE_URL=$url/covers
export MARQUEE_IMAGE_HOSTS=127.0.0.1 MARQUEE_ALLOW_PRIVATE_ADDRESSES=1
export MARQUEE_FETCH_RATE_LIMITS=tmdb=300,kofic=100,kakao=100,openlibrary=100

"$bin/marquee" topics create >/dev/null

# The chaos driver owns the workers: it starts them, kill -9s one every KILL_EVERY seconds and restarts it, and
# brings the broker and PostgreSQL down once each; after CHAOS_SECONDS it only keeps them running, until the
# file `stop` appears.
chaos() {
    local programs=() pids=() restarts=0 kafka_done=0 postgres_done=0 postgres_frozen=0 t0=$SECONDS
    for _ in $(seq 1 "${FETCH_WORKERS:-2}"); do programs+=(marquee-fetch); done
    for _ in $(seq 1 "${IMAGE_WORKERS:-1}"); do programs+=(marquee-images); done
    for _ in $(seq 1 "${INDEX_WORKERS:-1}"); do programs+=(marquee-index); done
    start_worker() { # slot
        local program=${programs[$1]} group_variable
        case $program in marquee-fetch) group_variable=MARQUEE_GROUP_FETCH ;; marquee-images) group_variable=MARQUEE_GROUP_IMAGES ;; *) group_variable=MARQUEE_GROUP_RECORDS ;; esac
        MARQUEE_GROUP=${!group_variable} "$bin/$program" >>"$logs/$program-$1.log" 2>&1 &
        pids[$1]=$!
    }
    note() { echo "$((SECONDS - t0))s $*" >>"$logs/chaos.log"; }
    freeze() { # kafka | postgres, its name in the log: SIGSTOP for OUTAGE seconds, then SIGCONT
        if scripts/stack.sh "pause-$1" 2>>"$logs/chaos.log"; then
            note "$2 frozen (SIGSTOP)"; sleep "$outage"; scripts/stack.sh "resume-$1"; note "$2 thawed (SIGCONT)"
        else
            note "$2 freeze skipped: not this stack's"
        fi
    }
    # The test broker's group coordinator can keep a member that left during a rebalance as the group's leader;
    # the members left then never get an assignment (docs/testing.md, "The test broker's group coordinator").
    # After the faults, a stage whose group has members and lag but no partition assigned to any of them for 60 s
    # is emptied for 20 s and started again, and the log says so (`unstick`).
    local -A stuck_since=()
    unstick() {
        local program group_variable json slot
        for program in marquee-fetch marquee-images marquee-index; do
            case $program in marquee-fetch) group_variable=MARQUEE_GROUP_FETCH ;; marquee-images) group_variable=MARQUEE_GROUP_IMAGES ;; *) group_variable=MARQUEE_GROUP_RECORDS ;; esac
            json=$("$bin/marquee" groups describe "${!group_variable}" --json 2>/dev/null) || continue
            if python3 -c 'import json,sys; d=json.load(sys.stdin); m=d.get("members") or []; sys.exit(0 if m and not any(x["assignment"] for x in m) and sum(p["lag"] or 0 for p in d.get("partitions") or []) > 0 else 1)' <<<"$json" 2>/dev/null; then
                stuck_since[$program]=${stuck_since[$program]:-$SECONDS}
                ((SECONDS - stuck_since[$program] >= 60)) || continue
                note "unstick $program: its workers held no partition for 60 s with lag; the group emptied for 20 s"
                for slot in "${!programs[@]}"; do
                    if [[ ${programs[$slot]} == "$program" ]]; then kill -TERM "${pids[$slot]}" 2>/dev/null || true; fi
                done
                for slot in "${!programs[@]}"; do
                    if [[ ${programs[$slot]} == "$program" ]]; then wait "${pids[$slot]}" 2>/dev/null || true; fi
                done
                sleep 20
                for slot in "${!programs[@]}"; do
                    if [[ ${programs[$slot]} == "$program" ]]; then start_worker "$slot"; fi
                done
            fi
            unset "stuck_since[$program]"
        done
    }
    for slot in "${!programs[@]}"; do start_worker "$slot"; done
    while [[ ! -f "$logs/stop" ]]; do
        sleep "$kill_every"
        local elapsed=$((SECONDS - t0))
        for slot in "${!programs[@]}"; do # a worker that ended by itself is a finding: restart it, and say so
            if ! kill -0 "${pids[$slot]}" 2>/dev/null; then
                # `|| status=$?`: under `set -e` a bare `wait` for a worker that failed would end the driver itself.
                local status=0
                wait "${pids[$slot]}" 2>/dev/null || status=$?
                # The stage's own last word ("stage stopped: …", critical), read before the restart appends to the log.
                local said
                said=$(grep '"level":"critical"' "$logs/${programs[$slot]}-$slot.log" 2>/dev/null | tail -1 | sed -n 's/.*"msg":"\([^"]*\)".*/\1/p' | cut -c1-200 || true)
                note "UNEXPECTED EXIT ${programs[$slot]} #$slot (status $status): restarted${said:+; it said: $said}"
                start_worker "$slot"
            fi
        done
        if ((elapsed >= chaos_seconds)); then
            [[ -f "$logs/faults-over" ]] || { note "faults over"; touch "$logs/faults-over"; }
            unstick
            continue
        fi
        local slot=$((RANDOM % ${#programs[@]}))
        kill -9 "${pids[$slot]}" 2>/dev/null || true
        wait "${pids[$slot]}" 2>/dev/null || true
        start_worker "$slot"
        restarts=$((restarts + 1))
        note "kill -9 ${programs[$slot]} #$slot, restarted"
        if ((elapsed >= 15 && kafka_done == 0)); then
            kafka_done=1
            freeze kafka broker
        fi
        if ((elapsed >= 35 && postgres_done == 0)); then
            postgres_done=1
            scripts/stack.sh stop-postgres 2>>"$logs/chaos.log"; note "PostgreSQL stopped"; sleep "$outage"
            scripts/stack.sh start-postgres >/dev/null 2>>"$logs/chaos.log"; note "PostgreSQL started"
        elif ((elapsed >= 50 && postgres_frozen == 0)); then
            postgres_frozen=1
            freeze postgres PostgreSQL
        fi
    done
    echo "$restarts" >"$logs/restarts"
    local stop_started=$SECONDS
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    echo "$((SECONDS - stop_started))" >"$logs/stop-seconds"
}
chaos &
chaos_pid=$!
finish() {
    touch "$logs/stop"
    wait "$chaos_pid" 2>/dev/null || true
    scripts/stack.sh resume-kafka 2>/dev/null || true
    scripts/stack.sh resume-postgres 2>/dev/null || true
    scripts/stack.sh start-postgres >/dev/null 2>&1 || true
    kill "$upstream" 2>/dev/null || true
}
trap finish EXIT
trap 'exit 130' INT TERM

# The crawl.
roots=$logs/roots.txt
enqueue() { "$bin/marquee" enqueue "$@" >>"$roots" 2>>"$logs/enqueue.log"; }
enqueue tmdb-list popular --pages "1-$pages" --language ko-KR --details --reviews --images
enqueue kofic-daily --from "$(date -d "$((short == 1 ? 3 : 30)) days ago" +%F)" --to "$(date -d yesterday +%F)" --details --images
enqueue openlibrary-search night --details --images
echo "fault run: $(wc -l <"$roots") root jobs enqueued (prefix $MARQUEE_TOPIC_PREFIX, logs $logs); faults for ${chaos_seconds}s"

until [[ -f "$logs/faults-over" ]]; do sleep 1; done # the driver's own pace
drain_status=0
"$bin/marquee" drain --roots "$roots" --max-wait "${MAX_WAIT:-30m}" --interval 2s >"$logs/drain.out" 2>&1 || drain_status=$?
touch "$logs/stop"
wait "$chaos_pid" 2>/dev/null || true

# The report.
failures=()
jobs=$(sql "SELECT count(*) FROM job_outcomes")
done_jobs=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'done'")
dead=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'dead-lettered'")
retrying=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'retried'")
fetch_jobs=$(sql "SELECT count(*) FROM job_outcomes WHERE stage = 'fetch'")
unexplained=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'dead-lettered' AND coalesce(error, '') = ''")
outage_dead=$(lineage_dead_lettered_during_outage)
spawned=$(sql "SELECT coalesce(sum(jsonb_array_length(spawned)), 0) FROM job_outcomes")
root_count=$(wc -l <"$roots")
roots_seen=$(sql "SELECT count(*) FROM job_outcomes WHERE parent_id IS NULL")
missing=$(lineage_missing)
orphans=$(lineage_orphans)
duplicates=$(sql "SELECT (SELECT count(*) - count(DISTINCT movie_id) FROM movies) + (SELECT count(*) - count(DISTINCT review_id) FROM reviews) + (SELECT count(*) - count(DISTINCT job_id) FROM job_outcomes)")
lag_json=$("$bin/marquee" lag --json --samples 1 2>>"$logs/lag.err" || true)
lag=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(sum(s["totals"]["lag"] for s in d["stages"]))' <<<"$lag_json" 2>/dev/null || echo "unknown")

echo
echo "Fault run report ($([[ $short == 1 ]] && echo short || echo long) form, $((SECONDS - started_at)) s)"
echo "  jobs             $jobs with an outcome ($fetch_jobs fetch), $done_jobs done, $dead dead-lettered, $retrying waiting for a retry"
echo "  roots            $root_count enqueued, $roots_seen with an outcome"
echo "  spawned          $spawned (what each job's runs spawned); $missing of them without a final outcome; $orphans outcomes of jobs no parent lists"
echo "  restarts         $(cat "$logs/restarts" 2>/dev/null || echo 0) kill -9s; $(grep -c 'UNEXPECTED EXIT' "$logs/chaos.log" || true) unexpected exits; $(grep -c ' unstick ' "$logs/chaos.log" || true) unsticks (the test broker's group livelock)"
echo "  outages          $(grep -E '^[0-9]+s (broker|PostgreSQL)' "$logs/chaos.log" | paste -sd ',' | sed 's/,/, /g')"
echo "  retries per tier $("$bin/marquee" topics list --pipeline-only --json | python3 -c 'import json,sys; print(", ".join("%s %d" % (t["name"].split(".",1)[1], t["end"]) for t in json.load(sys.stdin) if ".retry." in t["name"] and t["end"]))')"
echo "  lag at the end   $lag"
# Shutdown: every worker got SIGTERM at the end. A job left behind waited on something that ignores cancellation
# (the stage names its phase); a watchdog exit is a worker that outlived its exit deadline (docs/stage.md).
left_behind=$(cat "$logs"/marquee-*.log | grep -c '"job left behind' || true)
watchdog_exits=$(cat "$logs"/marquee-*.log | grep -c 'did not stop within' || true)
phases=$(cat "$logs"/marquee-*.log | grep '"job left behind' | sed -n 's/.*"marquee.job.phase":"\([^"]*\)".*/\1/p' | sort | uniq -c |
    awk '{count = $1; $1 = ""; printf "%s%d in%s", (NR > 1 ? ", " : ""), count, $0}' || true)
echo "  shutdown         workers stopped $(cat "$logs/stop-seconds" 2>/dev/null || echo '?') s after SIGTERM; $left_behind jobs left behind${phases:+ ($phases)}; $watchdog_exits watchdog exits"
echo "  duplicate rows   $duplicates (movies, reviews, job outcomes by their keys)"
echo "  dead letters by reason:"
sql "SELECT count(*) || '  ' || stage || '  ' || kind || '  ' || coalesce(error_kind, '') || '  ' || left(coalesce(error, ''), 90) FROM job_outcomes WHERE outcome = 'dead-lettered' GROUP BY stage, kind, error_kind, left(coalesce(error, ''), 90) ORDER BY count(*) DESC LIMIT 15" | sed 's/^/    /'

# What a failure needs to be found: the lost jobs and stray outcomes, and why each worker that ended by itself
# ended (the driver noted its last critical line).
lineage_details "$missing" "$orphans"
if grep -q 'UNEXPECTED EXIT' "$logs/chaos.log"; then
    echo "  unexpected exits, with the worker's last critical line:"
    grep 'UNEXPECTED EXIT' "$logs/chaos.log" | sed 's/^/    /'
fi

((drain_status == 0)) || failures+=("the crawl did not drain (marquee drain exit $drain_status; $logs/drain.out)")
((root_count == roots_seen)) || failures+=("$((root_count - roots_seen)) root jobs have no outcome")
((missing == 0)) || failures+=("$missing spawned jobs have no final outcome: lost")
((retrying == 0)) || failures+=("$retrying jobs still wait for a retry")
((unexplained == 0)) || failures+=("$unexplained dead letters without a reason")
((outage_dead == 0)) || failures+=("$outage_dead dead letters for an outage (the store, the image store or the broker down)")
((duplicates == 0)) || failures+=("$duplicates duplicate rows")
[[ "$lag" == 0 ]] || failures+=("lag at the end is $lag, not 0")
((watchdog_exits == 0)) || failures+=("$watchdog_exits workers outlived their exit deadline (their watchdog ended them)")
((short == 1 || fetch_jobs >= 10000)) || failures+=("only $fetch_jobs fetch jobs: the long form needs at least 10,000 (raise FAULT_PAGES)")
if ((${#failures[@]})); then
    printf 'FAILED: %s\n' "${failures[@]}"
    exit 1
fi
echo "OK: every job accounted for, none lost, no duplicates, drained to zero lag."
sql "SELECT 1" >/dev/null && psql -q -h 127.0.0.1 -p "$pg_port" -U marquee -d marquee -c "DROP DATABASE $database" >/dev/null 2>&1 || true
