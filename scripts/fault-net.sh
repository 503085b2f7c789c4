#!/usr/bin/env bash
# The multi-host fault run (`make fault-net`; FAULT_SHORT=1 for a short form of about 5 minutes): the pipeline on
# several hosts joined by a network, each host a network namespace with a veth pair on a bridge of its own (10.77.0.0/24 by default):
#
#   broker    10.77.0.2   tansu, listening on and advertising 10.77.0.2:9092
#   store     10.77.0.3   PostgreSQL on 10.77.0.3:5432
#   upstream  10.77.0.4   marquee-upstream on 10.77.0.4:8930, its faults on (as in scripts/fault-run.sh)
#   ctl       10.77.0.5   the operator: marquee topics/enqueue/drain/lag, psql
#   w1 … wN   10.77.0.11… worker hosts (FAULT_NET_HOSTS, 2 to 4) running marquee-fetch, marquee-images and
#                         marquee-index processes; every address they use is a bridge address, none is loopback
#
# The crawl comes in waves, each a slice of one crawl (TMDB popular pages, KOFIC days, an Open Library search) and
# one kind of fault, hitting while the wave's jobs are in flight; a wave ends when `marquee drain` finds it
# drained. Faults are made on the network: `ip link set <veth> down` on a host's bridge port cuts it off (its
# connections time out instead of being refused, as in a real partition), `up` brings it back.
#
#   baseline     (long form only) upstream faults alone: the retries and reruns every other wave is compared with
#   scale-up     marquee-fetch and marquee-images from 1 to 4 processes, one step at a time (short form: plus two kill -9s)
#   host-cut     worker host w1 cut off for FAULT_NET_WORKER_CUT (30) s while its processes hold jobs
#   kill         (long form only) a random worker kill -9'd every KILL_EVERY s, restarted at once
#   store-cut    the store host cut off for FAULT_NET_STORE_CUT s (short 90, long 720: past every retry tier and
#                postgres-nio's circuit breaker)
#   broker-cut   the broker host cut off for FAULT_NET_BROKER_CUT (45) s: past the producers' 30 s delivery timeout,
#                so the stages pause for the broker and resume (docs/stage.md)
#   scale-down   marquee-fetch and marquee-images from 4 processes back to 1 (SIGTERM, as an orchestrator does), one
#                at a time, each once the group has settled (a quirk of the test broker, see settle() below)
#
# A supervisor restarts any worker that exits (as a process manager would) and keeps each stage at its scale.
# Every outcome the indexer writes to job_outcomes is also recorded, by a trigger in the run's own database, in
# fault_net.outcome_log (each report proposed, and each change of a row with its previous outcome): from it come
# the reruns (a job's attempt reported by two runs) and the lineage regressions (a row going from done or
# dead-lettered back to retried). The trigger sees every write inside the indexer's own transaction, so nothing
# happens between two samples unseen.
#
# At the end, as in fault-run: every job accounted for, none lost, no duplicate rows, lag 0. Per wave
# (scripts/fault-net-report.py): the longest time a partition had no owner — no live process on a reachable host
# holding it, from the workers' "partitions assigned/revoked" log lines, the supervisor's kill and exit times and
# the links' down and up times — the time from the end of the fault until the wave drained, the retries, holds and
# dead letters, reruns and regressions; for the host cut, how soon the cut-off host's processes own partitions
# again after its link's return (goal: 15 s). A monitor samples every worker's /metrics every 2 s (monitor.tsv).
# The last line:
#   fault-net: jobs=… lost=… duplicates=… dead_lettered_during_outage=… rerun=… lineage_regressions=… max_unowned_s=… drain_s=…
# It exits 1 when a job was lost, a row duplicated, a record dead-lettered for an outage (the store, image store or
# broker down), a lineage regressed or the crawl did not drain; without root
# or network namespaces it says why, prints "fault-net: skipped" and exits 0.
#
# Settings (environment):
#   FAULT_SHORT=1            the short form (default with CI=true): 2 TMDB pages a wave, 5 waves, about 5 minutes
#   FAULT_NET_PAGES          TMDB popular pages per wave (short 2, long 71: 7 waves, 497 pages, over 10,000 fetch jobs)
#   FAULT_NET_HOSTS=3        worker hosts (2 to 4)
#   FAULT_NET_TUNING         recommended (default) or defaults: `recommended` adds to the workers' own network
#                            timeouts a 5 s store deadline, PostgreSQL's keep-alives and checks and the hosts'
#                            keep-alive timing (docs/deploy.md, "On a real network"); `defaults` leaves all of
#                            them at librdkafka's, PostgreSQL's and the kernel's defaults, to compare
#   FAULT_NET_WORKER_CUT=30 FAULT_NET_STORE_CUT=90|720 FAULT_NET_BROKER_CUT=45   seconds of each cut
#   FAULT_NET_SUBNET=10.77.0 the first three octets of the private /24 used inside the namespaces
#   FAULT_NET_STEP           seconds between the scale waves' steps (short 4, long 10)
#   KILL_EVERY               seconds between kill -9s in the kill wave (long form: 6, for 60 s)
#   MAX_WAIT                 how long each wave may take to drain (short 5m, long 30m)
#   FAULT_NET_KAFKA_PROPERTIES  librdkafka properties added for every worker (key=value,…; they win over the tuning's)
#   FAULT_NET_KAFKA_DEBUG    a librdkafka debug context for every worker (e.g. cgrp: the group protocol), in their
#                            logs (which then log at debug level)
#   FAULT_NET_WAVES          the waves to run, in order (e.g. "scale-up scale-down"; default: the form's)
#   BIN=.build/debug         where the executables are; they are copied into the run's folder first, so a build
#                            during the run does not change them
set -euo pipefail
# One brace group around the whole script: bash reads all of it before it runs, so a change to this file during a
# run (which lasts minutes) cannot change what the run does.
{
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

skip() {
    echo "fault-net: $*"
    echo "fault-net: skipped"
    exit 0
}
[[ "$(id -u)" == 0 ]] || skip "needs root: the hosts are network namespaces (ip netns) joined by a bridge"
command -v ip >/dev/null || skip "iproute2's ip is not installed"
for tool in python3 psql runuser; do command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh)"; done

run=$$
prefix=fnet$run        # namespaces: fnet<pid>-<host>
link=fn$run            # the bridge fn<pid>-br, the hosts' bridge ports fn<pid>-<tag> (at most 15 characters)
subnet=${FAULT_NET_SUBNET:-10.77.0}

# Leftovers of a run that was killed before its trap ran: namespaces, links and PostgreSQL folders whose run's
# process is gone. Only the processes inside those namespaces are ended (by their ids).
sweep_leftovers() {
    local namespace owner pid name
    for namespace in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^fnet[0-9]+-' || true); do
        owner=${namespace#fnet}
        owner=${owner%%-*}
        [[ "$owner" == "$run" ]] && continue
        kill -0 "$owner" 2>/dev/null && continue
        for pid in $(ip netns pids "$namespace" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$namespace" 2>/dev/null || true
    done
    for name in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^fn[0-9]+-' || true); do
        owner=${name#fn}
        owner=${owner%%-*}
        [[ "$owner" == "$run" ]] && continue
        kill -0 "$owner" 2>/dev/null || ip link del "$name" 2>/dev/null || true
    done
    for name in /tmp/marquee-fnet-*; do
        [[ -d "$name" ]] || continue
        owner=${name##*-}
        kill -0 "$owner" 2>/dev/null || rm -rf "$name"
    done
}
sweep_leftovers

# Can this machine make the hosts at all? A container without CAP_SYS_ADMIN or CAP_NET_ADMIN cannot.
ip netns add "$prefix-probe" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed: no CAP_SYS_ADMIN?)"
ip netns del "$prefix-probe"
ip link add "$link-br" type bridge 2>/dev/null || skip "cannot create a bridge (ip link add type bridge failed: no CAP_NET_ADMIN?)"
ip link del "$link-br"

short=${FAULT_SHORT:-$([[ "${CI:-}" == true ]] && echo 1 || echo 0)}
pages=${FAULT_NET_PAGES:-$((short == 1 ? 2 : 71))}
hosts=${FAULT_NET_HOSTS:-3}
tuning=${FAULT_NET_TUNING:-recommended}
worker_cut=${FAULT_NET_WORKER_CUT:-30}
# The store is cut for longer than the longest retry tier (15 s here) and than postgres-nio's pool takes to trip its
# circuit breaker (60 s): an indexer must pause throughout, never dead-letter.
store_cut=${FAULT_NET_STORE_CUT:-$((short == 1 ? 90 : 720))}
broker_cut=${FAULT_NET_BROKER_CUT:-45}
kill_every=${KILL_EVERY:-6}
max_wait=${MAX_WAIT:-$((short == 1 ? 5 : 30))m}
[[ "$hosts" =~ ^[2-4]$ ]] || { echo "fault-net: FAULT_NET_HOSTS must be 2, 3 or 4" >&2; exit 2; }
[[ "$tuning" == recommended || "$tuning" == defaults ]] || { echo "fault-net: FAULT_NET_TUNING must be recommended or defaults" >&2; exit 2; }
if ((short == 1)); then
    waves=(scale-up host-cut store-cut broker-cut scale-down)
    lead=4   # seconds from a wave's enqueue to its fault: its jobs are in flight by then
    step=4   # seconds between scaling steps
else
    waves=(baseline scale-up host-cut kill store-cut broker-cut scale-down)
    lead=15
    step=10
fi
step=${FAULT_NET_STEP:-$step}
[[ "$step" =~ ^[1-9][0-9]*$ ]] || { echo "fault-net: FAULT_NET_STEP must be a number of seconds" >&2; exit 2; }
if [[ -n "${FAULT_NET_WAVES:-}" ]]; then read -r -a waves <<<"$FAULT_NET_WAVES"; fi
((${#waves[@]} * pages <= 500)) || { echo "fault-net: TMDB's popular list has 500 pages: FAULT_NET_PAGES at most $((500 / ${#waves[@]}))" >&2; exit 2; }

source_bin=${BIN:-.build/debug}
for program in marquee marquee-fetch marquee-images marquee-index marquee-upstream; do
    [[ -x "$source_bin/$program" ]] || { echo "fault-net: $source_bin/$program is missing: swift build first" >&2; exit 1; }
done
tansu="$root/.deps/bin/tansu"
[[ -x "$tansu" ]] || { echo "fault-net: tansu is not installed: run scripts/setup.sh" >&2; exit 1; }
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[[ -n "$pg_bin" ]] || { echo "fault-net: PostgreSQL is not installed: run scripts/setup.sh" >&2; exit 1; }

stamp=$(date +%s)
logs=${RUN_LOGS:-var/fault-net/$stamp}
logs=$(mkdir -p "$logs" && cd "$logs" && pwd)
state=$logs/state
mkdir -p "$state" "$logs/workers"
pg_dir=/tmp/marquee-fnet-$run
started_at=$SECONDS

say() { printf 'fault-net: %s\n' "$*"; }
event() { printf '%s\t%s\n' "$(date +%s.%N)" "$*" >>"$logs/events.tsv"; }

# The hosts: name, address, bridge-port tag.
declare -A address=([broker]=$subnet.2 [store]=$subnet.3 [upstream]=$subnet.4 [ctl]=$subnet.5)
declare -A port_tag=([broker]=bk [store]=st [upstream]=up [ctl]=ct)
worker_hosts=()
for index in $(seq 1 "$hosts"); do
    worker_hosts+=("w$index")
    address[w$index]=$subnet.$((10 + index))
    port_tag[w$index]=w$index
done
in_host() { # host command...: run a command on a host (inside its namespace)
    local host=$1
    shift
    ip netns exec "$prefix-$host" "$@"
}
ctl() { in_host ctl "$@"; }

# Every process is ended by its id; the namespaces, links and the PostgreSQL folder are removed, whatever happened.
cleanup() {
    local status=$?
    set +e
    touch "$state/stop"
    if [[ -n "${supervisor:-}" ]]; then
        # The supervisor stops its workers on `stop`; give it their shutdown time, then end what is left.
        for _ in $(seq 1 300); do kill -0 "$supervisor" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$supervisor" 2>/dev/null
    fi
    for file in "$state"/pid-*; do
        [[ -f "$file" ]] && kill -9 "$(cat "$file")" 2>/dev/null
    done
    # A run that ended early keeps the lineage it had, for scripts/fault-net-report.py.
    [[ -f "$logs/outcome-log.csv" || -z "${lineage_ready:-}" ]] || export_lineage >/dev/null 2>&1
    [[ -n "${monitor:-}" ]] && kill "$monitor" 2>/dev/null
    [[ -n "${upstream_pid:-}" ]] && kill "$upstream_pid" 2>/dev/null
    [[ -n "${broker_pid:-}" ]] && kill -9 "$broker_pid" 2>/dev/null
    if [[ -f "$pg_dir/data/postmaster.pid" ]]; then
        runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w -t 20 stop >/dev/null 2>&1
    fi
    local host pid
    for host in broker store upstream ctl "${worker_hosts[@]}"; do
        for pid in $(ip netns pids "$prefix-$host" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$prefix-$host" 2>/dev/null
    done
    for host in broker store upstream ctl "${worker_hosts[@]}"; do ip link del "$link-${port_tag[$host]}" 2>/dev/null; done
    ip link del "$link-br" 2>/dev/null
    cp "$pg_dir/postgres.log" "$logs/" 2>/dev/null
    rm -rf "$pg_dir" "$logs/bin"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The network: one bridge, a veth pair per host (the host's end is its eth0, the other end a port of the bridge).
# Loopback stays down in every namespace: nothing can talk over it.
ip link add "$link-br" type bridge
ip link set "$link-br" up
for host in broker store upstream ctl "${worker_hosts[@]}"; do
    ip netns add "$prefix-$host"
    ip link add "$link-${port_tag[$host]}" type veth peer name eth0 netns "$prefix-$host"
    ip link set "$link-${port_tag[$host]}" master "$link-br" up
    ip -n "$prefix-$host" addr add "${address[$host]}/24" dev eth0
    ip -n "$prefix-$host" link set eth0 up
done
cut_link() { # host seconds: the host's bridge port down for that long, then up again
    event link-down "$1"
    ip link set "$link-${port_tag[$1]}" down
    sleep "$2"
    ip link set "$link-${port_tag[$1]}" up
    event link-up "$1"
}
port_open() { ctl timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }
wait_port() { # what host port seconds
    for _ in $(seq 1 $(($4 * 10))); do port_open "$2" "$3" && return 0; sleep 0.1; done
    say "$1 did not answer on $2:$3 within $4 s ($logs)"
    exit 1
}

# The binaries, as deployed: a copy, so a build in the checkout during the run changes nothing.
mkdir -p "$logs/bin"
for program in marquee marquee-fetch marquee-images marquee-index marquee-upstream; do cp "$source_bin/$program" "$logs/bin/"; done
bin=$logs/bin

# Timeouts and keep-alives (docs/deploy.md, "On a real network"). Both forms keep what the test broker needs: a
# 6 s session (its JoinGroup waits about half of it) and one record per produce request (its end offsets).
kafka_properties=batch.num.messages=1${FAULT_NET_KAFKA_DEBUG:+,debug=$FAULT_NET_KAFKA_DEBUG}
# The long form's load on the test broker, one record per produce request, has it acknowledge some outputs only
# after the workers' 30 s delivery timeout, which stops a worker (its jobs run again elsewhere): a slow test broker,
# not a fault to measure.
((short == 1)) || kafka_properties+=,delivery.timeout.ms=120000
pg_settings=()
if [[ "$tuning" == recommended ]]; then
    # Produce requests keep their 30 s (request.timeout.ms): a shorter one is worth it only with a delivery timeout
    # longer than Marquee's 30 s, and 10 s changed nothing in the long form, whose broker answered later than
    # both under load (docs/deploy.md, "On a real network").
    export MARQUEE_STORE_TIMEOUT=5
    pg_settings=(-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3
        -c tcp_user_timeout=10000 -c client_connection_check_interval=5000 -c idle_in_transaction_session_timeout=60000)
    # The keep-alive timing of the workers' sockets is the host's (per network namespace, as a pod's sysctls):
    # librdkafka only turns SO_KEEPALIVE on.
    for host in "${worker_hosts[@]}"; do
        in_host "$host" sysctl -q -w net.ipv4.tcp_keepalive_time=30 net.ipv4.tcp_keepalive_intvl=5 net.ipv4.tcp_keepalive_probes=3
    done
else
    # What the workers had before they set their own (librdkafka's defaults), to compare.
    kafka_properties+=,socket.timeout.ms=60000,socket.keepalive.enable=false,metadata.max.age.ms=900000
fi
# Properties of one's own on top (the later of two equal keys wins), to try a value.
kafka_properties+=${FAULT_NET_KAFKA_PROPERTIES:+,$FAULT_NET_KAFKA_PROPERTIES}

# The store host: a throw-away PostgreSQL cluster (it refuses to run as root; its user cannot enter /root).
mkdir -p "$pg_dir"
chown postgres: "$pg_dir"
runuser -u postgres -- "$pg_bin/initdb" -D "$pg_dir/data" --auth=trust --username=marquee -E UTF8 --locale=C.UTF-8 >/dev/null
echo "host all all $subnet.0/24 trust" >>"$pg_dir/data/pg_hba.conf"
in_host store runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/postgres.log" -w -t 30 \
    -o "-p 5432 -k $pg_dir -c listen_addresses=${address[store]} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${pg_settings[*]}" \
    start >/dev/null
sql() { ctl psql -X -qtA -v ON_ERROR_STOP=1 -h "${address[store]}" -p 5432 -U marquee -d marquee -c "$1"; }
source "$root/scripts/fault-lineage.sh"
ctl psql -X -q -h "${address[store]}" -p 5432 -U marquee -d postgres -c "CREATE DATABASE marquee" >/dev/null

# The broker host.
in_host broker "$tansu" broker --listener-url "tcp://${address[broker]}:9092" \
    --advertised-listener-url "tcp://${address[broker]}:9092" >"$logs/tansu.log" 2>&1 </dev/null &
broker_pid=$!
disown "$broker_pid"  # ended by the cleanup's kill -9: no "Killed" note from bash
wait_port tansu "${address[broker]}" 9092 20

# The upstream host, faults on.
in_host upstream "$bin/marquee-upstream" --host "${address[upstream]}" --port 8930 --movies 20000 --books 500 \
    --fault-5xx 0.04 --fault-429 0.02 --fault-timeout 0.003 --fault-reset 0.02 --fault-malformed 0.01 \
    --fault-truncated-image 0.03 >"$logs/upstream.out" 2>"$logs/upstream.log" </dev/null &
upstream_pid=$!
disown "$upstream_pid"
wait_port marquee-upstream "${address[upstream]}" 8930 20
url=http://${address[upstream]}:8930

# What every process shares (the workers and the operator's CLI alike).
export MARQUEE_BROKERS=${address[broker]}:9092
export MARQUEE_TOPIC_PREFIX=fnet$stamp.
for stage in FETCH IMAGES RECORDS; do export "MARQUEE_GROUP_$stage=fnet$stamp-${stage,,}"; done
export MARQUEE_RETRY_DELAYS=${MARQUEE_RETRY_DELAYS:-1s,5s,15s}
export MARQUEE_TOPIC_PARTITIONS=${MARQUEE_TOPIC_PARTITIONS:-4}
export MARQUEE_SESSION_TIMEOUT=6s MARQUEE_SHUTDOWN_TIMEOUT=10s
export MARQUEE_KAFKA_PROPERTIES=$kafka_properties
[[ -z "${FAULT_NET_KAFKA_DEBUG:-}" ]] || export MARQUEE_LOG_LEVEL=debug
export MARQUEE_STORE="postgres://marquee@${address[store]}:5432/marquee?sslmode=disable"
export MARQUEE_IMAGE_STORE=file://$logs/images
export MARQUEE_VALIDATOR_CACHE=store
export TMDB_API_KEY=marquee-emulator KOFIC_API_KEY=marquee-emulator KAKAO_REST_API_KEY=marquee-emulator
export TMDB_BASE_URL=$url/tmdb/3 TMDB_IMAGE_BASE_URL=$url/tmdb-images/t/p
export KOFIC_BASE_URL=$url/kofic/kobisopenapi/webservice/rest KAKAO_BASE_URL=$url/kakao
export OPENLIBRARY_BASE_URL=$url/openlibrary OPENLIBRARY_COVERS_BASE_URL=$url/covers
export MARQUEE_IMAGE_HOSTS=${address[upstream]} MARQUEE_ALLOW_PRIVATE_ADDRESSES=1
# The short form's waves are small: a low TMDB rate keeps each wave's jobs in flight while its fault hits.
export MARQUEE_FETCH_RATE_LIMITS=${MARQUEE_FETCH_RATE_LIMITS:-$([[ $short == 1 ]] && echo tmdb=3,kofic=3,kakao=3,openlibrary=3 || echo tmdb=300,kofic=100,kakao=100,openlibrary=100)}

ctl "$bin/marquee" topics create >/dev/null

# Where each stage's processes run: slot k of a stage on worker host ((k - 1 + offset) mod hosts) + 1, so that at
# four processes every host runs some of each stage, and w1 (the host cut off) runs fetch, images and index.
host_of() { # stage slot
    local offset
    case $1 in fetch) offset=0 ;; images) offset=1 ;; *) offset=$((hosts - 1)) ;; esac
    echo "w$((($2 - 1 + offset) % hosts + 1))"
}
desire() { # stage n: written whole (a rename), so the supervisor never reads a half-written count
    echo "$2" >"$state/desired-$1.new"
    mv "$state/desired-$1.new" "$state/desired-$1"
}
desire fetch 1
desire images 1
desire index 2
scale() { # n: the fetch and image stages' process count
    desire fetch "$1"
    desire images "$1"
    event scale "$1"
}

# The supervisor: keeps each stage at its count (state/desired-<stage>), starts a worker in place of one that
# exited (kill -9, a failure, a scale-down's SIGTERM once the count goes up again), and on `stop` stops them all.
supervise() {
    set +e  # a failed command must not end the supervisor: it is what restarts the workers
    local -A pids=() instances=() terminating=() last_start=()
    start_worker() { # stage slot
        local stage=$1 slot=$2 host program group n log
        host=$(host_of "$stage" "$slot")
        case $stage in
            fetch) program=marquee-fetch group=$MARQUEE_GROUP_FETCH ;;
            images) program=marquee-images group=$MARQUEE_GROUP_IMAGES ;;
            *) program=marquee-index group=$MARQUEE_GROUP_RECORDS ;;
        esac
        n=$((${instances[$stage$slot]:-0} + 1))
        instances[$stage$slot]=$n
        log=$logs/workers/$stage$slot.$n.log
        ip netns exec "$prefix-$host" env MARQUEE_GROUP="$group" MARQUEE_METRICS_ADDRESS="${address[$host]}:0" \
            "$bin/$program" >>"$log" 2>&1 </dev/null &
        pids[$stage$slot]=$!
        last_start[$stage$slot]=$SECONDS
        echo $! >"$state/pid-$stage$slot"
        event start "$stage" "$slot" "$host" $! "$log"
    }
    local stage slot pid status desired
    while [[ ! -f "$state/stop" ]]; do
        for stage in fetch images index; do
            desired=$(<"$state/desired-$stage")
            [[ "$desired" =~ ^[0-4]$ ]] || continue
            for slot in 1 2 3 4; do
                pid=${pids[$stage$slot]:-}
                if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
                    status=0
                    wait "$pid" 2>/dev/null || status=$?
                    event exit "$stage" "$slot" "$pid" "$status" "$([[ -f "$state/killed-$pid" ]] && echo killed || { [[ -n "${terminating[$pid]:-}" ]] && echo stopped || echo unexpected; })"
                    pids[$stage$slot]=""
                    rm -f "$state/pid-$stage$slot"
                    pid=""
                fi
                if ((slot <= desired)); then
                    # At most one start a second per slot, as a process manager's restart delay.
                    [[ -n "$pid" ]] || ((SECONDS - ${last_start[$stage$slot]:--9} < 1)) || start_worker "$stage" "$slot"
                elif [[ -n "$pid" && -z "${terminating[$pid]:-}" ]]; then
                    terminating[$pid]=1
                    event term "$stage" "$slot" "$pid"
                    kill -TERM "$pid" 2>/dev/null || true
                fi
            done
        done
        sleep 0.3
    done
    event stop-all
    for pid in "${pids[@]}"; do [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do [[ -n "$pid" ]] && { wait "$pid" 2>/dev/null || true; }; done
    event stopped-all
}
# Its stderr is bash's own notes about the workers it reaps ("Killed").
supervise 2>>"$logs/supervisor.log" &
supervisor=$!

kill9() { # stage slot
    local pid
    pid=$(cat "$state/pid-$1$2" 2>/dev/null) || return 0
    touch "$state/killed-$pid"
    event kill9 "$1" "$2" "$pid"
    kill -9 "$pid" 2>/dev/null || true
}
kill9_random() {
    local running=() file
    for file in "$state"/pid-*; do [[ -f "$file" ]] && running+=("${file##*/pid-}"); done
    ((${#running[@]})) || return 0
    local pick=${running[$((RANDOM % ${#running[@]}))]}
    kill9 "${pick%%[0-9]*}" "${pick##*[a-z]}"
}
# Waits (at most 30 s) until every fetch and image worker left holds partitions assigned after the last scaling
# step: one worker leaves at a time. The test broker (tansu 0.6.0) can keep a member that leaves while its group
# rebalances as the group's leader for good; the members left then rejoin forever without an assignment
# (docs/testing.md, "The multi-host fault run").
settle() { # n
    local since deadline=$((SECONDS + 30)) stage slot log latest settled
    since=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
    sleep 1
    while ((SECONDS < deadline)); do
        settled=1
        for stage in fetch images; do
            for slot in $(seq 1 "$1"); do
                # `|| true`: a worker just restarted has no log line yet (pipefail would end the run here).
                log=$(ls -t "$logs/workers/$stage$slot".*.log 2>/dev/null | head -1) || true
                latest=$(grep -o '"ts":"[^"]*","level":"info","label":"[^"]*","msg":"partitions assigned: [^"]' "$log" 2>/dev/null | tail -1 | cut -d'"' -f4) || true
                [[ -n "$latest" && "$latest" > "$since" ]] || settled=0
            done
        done
        ((settled)) && return 0
        sleep 0.5
    done
}

# The same livelock can follow workers that stop while their group rebalances for any reason (a delivery that
# timed out ends a worker, and under load several end together). A stage whose every worker has held no partition
# for a minute while it has lag is emptied — its workers stopped — for 20 s and started again, which ends it. Each
# time is an `unstick` event, named in the report; the partitions' time without an owner counts as any other.
declare -A last_unstick=()
unstick_if_stuck() { # the drain's output file
    local stage lag_name lag now desired stuck file name
    now=$(date +%s)
    for stage in fetch images index; do
        ((now - ${last_unstick[$stage]:-0} >= 120)) || continue
        lag_name=$stage
        [[ $stage == index ]] && lag_name=records
        lag=$(grep -ao "$lag_name lag [0-9,]*" "$1" 2>/dev/null | tail -1 | tr -dc 0-9) || true
        [[ -n "$lag" && "$lag" -gt 0 ]] || continue
        stuck=0
        for file in "$state"/pid-"$stage"*; do
            [[ -f "$file" ]] || { stuck=0; break; }
            name=${file##*/pid-}
            stuck=1
            awk -F'\t' -v n="$name" -v since=$((now - 60)) \
                '$2 == n && $1 >= since { total++; if ($4 == "assigned_partitions=0") idle++ } END { exit !(total >= 20 && idle == total) }' \
                "$logs/monitor.tsv" || { stuck=0; break; }
        done
        ((stuck)) || continue
        last_unstick[$stage]=$now
        desired=$(<"$state/desired-$stage")
        event unstick "$stage"
        say "no $stage worker got partitions for a minute (the test broker's livelock): emptying the group for 20 s"
        desire "$stage" 0
        sleep 20
        desire "$stage" "$desired"
    done
}

# What the processes of a host hold just before it is cut off: their jobs in flight, the jobs taken and not yet
# committable (in flight, or finished behind one in flight), and partitions, from /metrics.
snapshot_host() { # host
    local file stage slot log metrics
    for file in "$state"/pid-*; do
        [[ -f "$file" ]] || continue
        stage=${file##*/pid-}
        slot=${stage##*[a-z]}
        stage=${stage%%[0-9]*}
        [[ "$(host_of "$stage" "$slot")" == "$1" ]] || continue
        log=$(ls -t "$logs/workers/$stage$slot".*.log 2>/dev/null | head -1) || true
        metrics=$(sed -n 's/.*"marquee.metrics":"\([^"]*\)".*/\1/p' "$log" 2>/dev/null | tail -1) || true
        [[ -n "$metrics" ]] || continue
        ctl python3 - "$metrics" "$stage" "$slot" <<'EOF' >>"$logs/snapshots.tsv" || true
import sys, time, urllib.request
url, stage, slot = sys.argv[1:4]
figures = {}
for line in urllib.request.urlopen(url, timeout=2).read().decode().splitlines():
    for name in ("marquee_stage_in_flight", "marquee_stage_uncommitted", "marquee_stage_assigned_partitions"):
        if line.startswith(name) and not line.startswith(name + "_"):
            figures[name] = figures.get(name, 0) + float(line.rsplit(" ", 1)[1])
print(f"{time.time():.3f}\t{stage}{slot}\tin_flight={int(figures.get('marquee_stage_in_flight', 0))}\tuncommitted={int(figures.get('marquee_stage_uncommitted', 0))}\tpartitions={int(figures.get('marquee_stage_assigned_partitions', 0))}")
EOF
    done
}

# A monitor on the operator's host: every 2 s, each running worker's jobs in flight, partitions assigned and paused,
# and jobs finished (its /metrics), into monitor.tsv: when a worker works again after a cut, and a worker that holds
# no partition while its group has lag.
ctl python3 - "$state" "$logs/workers" >"$logs/monitor.tsv" 2>/dev/null <<'EOF' &
import glob, os, re, sys, time, urllib.request
state, workers = sys.argv[1:3]
names = ("marquee_stage_in_flight", "marquee_stage_assigned_partitions", "marquee_stage_paused_partitions",
         "marquee_stage_jobs_total")
while not os.path.exists(os.path.join(state, "stop")):
    for pid_file in sorted(glob.glob(os.path.join(state, "pid-*"))):
        name = pid_file.rsplit("pid-", 1)[1]
        logs = sorted(glob.glob(os.path.join(workers, name + ".*.log")), key=os.path.getmtime)
        try:
            url = re.findall(r'"marquee.metrics":"([^"]+)"', open(logs[-1], errors="replace").read())[-1]
            text = urllib.request.urlopen(url, timeout=2).read().decode()
        except Exception:
            continue
        figures = {n: 0 for n in names}
        for line in text.splitlines():
            for n in names:
                if line.startswith(n) and not line.startswith(n + "_"):
                    figures[n] += float(line.rsplit(" ", 1)[1])
        print(f"{time.time():.3f}\t{name}\t" + "\t".join(f"{n[14:]}={int(figures[n])}" for n in names), flush=True)
    time.sleep(2)
EOF
monitor=$!

export_lineage() { # the lineage's history and its final rows, as CSV files for scripts/fault-net-report.py
    ctl timeout 120 psql -X -q -h "${address[store]}" -p 5432 -U marquee -d marquee \
        -c "\\copy (SELECT * FROM fault_net.outcome_log ORDER BY seq) TO '$logs/outcome-log.csv' CSV HEADER"
    ctl timeout 120 psql -X -q -h "${address[store]}" -p 5432 -U marquee -d marquee \
        -c "\\copy (SELECT job_id, root_id, parent_id, stage, kind, attempt, outcome, error FROM job_outcomes) TO '$logs/job-outcomes.csv' CSV HEADER"
}

# The lineage log: created once the schema exists (the first fetch worker migrates it at its first heartbeat),
# before anything is enqueued, so it sees every outcome.
for _ in $(seq 1 600); do
    [[ "$(sql "SELECT to_regclass('public.job_outcomes') IS NOT NULL" 2>/dev/null)" == t ]] && break
    sleep 0.1
done
[[ "$(sql "SELECT to_regclass('public.job_outcomes') IS NOT NULL")" == t ]] || { say "the store's schema did not appear within 60 s ($logs/workers)"; exit 1; }
sql "$(cat <<'EOF'
CREATE SCHEMA fault_net;
CREATE TABLE fault_net.outcome_log (
    seq bigserial PRIMARY KEY,
    logged_at double precision NOT NULL DEFAULT extract(epoch FROM clock_timestamp()),
    op text NOT NULL,
    job_id text NOT NULL, root_id text, stage text, kind text, attempt int, outcome text, error text, source text,
    fetched_at bigint, old_outcome text, old_attempt int, old_source text, old_fetched_at bigint
);
CREATE FUNCTION fault_net.log_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO fault_net.outcome_log (op, job_id, root_id, stage, kind, attempt, outcome, error, source, fetched_at)
        VALUES ('report', NEW.job_id, NEW.root_id, NEW.stage, NEW.kind, NEW.attempt, NEW.outcome, NEW.error, NEW.source, NEW.fetched_at);
        RETURN NEW;
    END IF;
    INSERT INTO fault_net.outcome_log (op, job_id, root_id, stage, kind, attempt, outcome, error, source, fetched_at,
        old_outcome, old_attempt, old_source, old_fetched_at)
    VALUES ('change', NEW.job_id, NEW.root_id, NEW.stage, NEW.kind, NEW.attempt, NEW.outcome, NEW.error, NEW.source,
        NEW.fetched_at, OLD.outcome, OLD.attempt, OLD.source, OLD.fetched_at);
    RETURN NULL;
END $$;
-- BEFORE INSERT sees every row the indexer proposes (an upsert's stale row too); AFTER UPDATE every row it changed.
CREATE TRIGGER fault_net_report BEFORE INSERT ON public.job_outcomes FOR EACH ROW EXECUTE FUNCTION fault_net.log_outcome();
CREATE TRIGGER fault_net_change AFTER UPDATE ON public.job_outcomes FOR EACH ROW EXECUTE FUNCTION fault_net.log_outcome();
EOF
)"
lineage_ready=1

# The first wave starts once every initial worker holds partitions (a rebalance at the start is not a fault's).
for _ in $(seq 1 900); do
    ready=1
    for log in "$logs"/workers/fetch1.1.log "$logs"/workers/images1.1.log "$logs"/workers/index1.1.log "$logs"/workers/index2.1.log; do
        grep -q '"partitions assigned: [^"]' "$log" 2>/dev/null || ready=0
    done
    ((ready)) && break
    sleep 0.1
done
((ready)) || say "warning: not every initial worker was assigned partitions within 90 s"
say "hosts up (broker ${address[broker]}, store ${address[store]}, upstream ${address[upstream]}, workers ${worker_hosts[*]}); tuning $tuning; logs $logs"

# The waves. Wave k takes TMDB popular pages (k-1)*pages+1 … k*pages, KOFIC days further back each wave, and one
# Open Library search.
searches=(night day sea city war love house)
wave_number=0
for wave in "${waves[@]}"; do
    wave_number=$((wave_number + 1))
    ctl curl -s -m 5 "$url/_stats" >"$logs/stats-$wave-start.json" || true
    event wave-start "$wave"
    roots=$logs/roots-$wave.txt
    : >"$roots"
    first=$(((wave_number - 1) * pages + 1))
    days=$((short == 1 ? 1 : 4))
    {
        ctl "$bin/marquee" enqueue tmdb-list popular --pages "$first-$((first + pages - 1))" --language ko-KR --details --reviews --images
        ctl "$bin/marquee" enqueue kofic-daily --from "$(date -d "$((wave_number * days + days - 1)) days ago" +%F)" \
            --to "$(date -d "$((wave_number * days)) days ago" +%F)" --details --images
        ctl "$bin/marquee" enqueue openlibrary-search "${searches[$(((wave_number - 1) % ${#searches[@]}))]}" --details --images
    } >>"$roots" 2>>"$logs/enqueue.log"
    cat "$roots" >>"$logs/roots.txt"
    say "wave $wave_number/${#waves[@]} $wave: $(wc -l <"$roots") roots enqueued"
    case $wave in
        scale-up)
            for n in 2 3 4; do
                sleep "$step"
                scale "$n"
            done
            if ((short == 1)); then
                sleep "$step"; kill9_random
                sleep "$step"; kill9_random
            fi
            ;;
        host-cut)
            sleep "$lead"
            snapshot_host w1
            cut_link w1 "$worker_cut"
            ;;
        kill)
            for _ in $(seq 1 $((60 / kill_every))); do
                sleep "$kill_every"
                kill9_random
            done
            ;;
        store-cut) sleep "$lead"; cut_link store "$store_cut" ;;
        broker-cut) sleep "$lead"; cut_link broker "$broker_cut" ;;
        scale-down)
            for n in 3 2 1; do
                sleep "$step"
                scale "$n"
                settle "$n"
            done
            ;;
    esac
    event wave-faults-over "$wave"
    ctl "$bin/marquee" drain --roots "$roots" --max-wait "$max_wait" --interval 1s --settle 3 >"$logs/drain-$wave.out" 2>&1 &
    drain_pid=$!
    while kill -0 "$drain_pid" 2>/dev/null; do
        sleep 5
        unstick_if_stuck "$logs/drain-$wave.out"
    done
    status=0
    wait "$drain_pid" || status=$?
    event wave-drained "$wave" "$status"
    ctl curl -s -m 5 "$url/_stats" >"$logs/stats-$wave-end.json" || true
    say "wave $wave_number/${#waves[@]} $wave: $([[ $status == 0 ]] && echo drained || echo "NOT drained (marquee drain exit $status)") at $((SECONDS - started_at)) s"
done

# Every worker stops (SIGTERM); then the lineage and the store are read.
touch "$state/stop"
wait "$supervisor" 2>/dev/null || true
supervisor=""

root_count=$(wc -l <"$logs/roots.txt")
roots_seen=$(sql "SELECT count(*) FROM job_outcomes WHERE parent_id IS NULL")
jobs=$(sql "SELECT count(*) FROM job_outcomes")
fetch_jobs=$(sql "SELECT count(*) FROM job_outcomes WHERE stage = 'fetch'")
done_jobs=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'done'")
dead=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'dead-lettered'")
retrying=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'retried'")
unexplained=$(sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'dead-lettered' AND coalesce(error, '') = ''")
outage_dead=$(lineage_dead_lettered_during_outage)
missing=$(lineage_missing)
orphans=$(lineage_orphans)
duplicates=$(sql "SELECT (SELECT count(*) - count(DISTINCT movie_id) FROM movies) + (SELECT count(*) - count(DISTINCT review_id) FROM reviews) + (SELECT count(*) - count(DISTINCT job_id) FROM job_outcomes)")
lost=$((missing + root_count - roots_seen))
lag_json=$(ctl "$bin/marquee" lag --json --samples 1 2>>"$logs/lag.err" || true)
lag=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(sum(s["totals"]["lag"] for s in d["stages"]))' <<<"$lag_json" 2>/dev/null || echo unknown)
export_lineage

echo
echo "Fault-net report ($([[ $short == 1 ]] && echo short || echo long) form, $hosts worker hosts, tuning $tuning, $((SECONDS - started_at)) s)"
echo "  jobs             $jobs with an outcome ($fetch_jobs fetch), $done_jobs done, $dead dead-lettered, $retrying waiting for a retry"
echo "  roots            $root_count enqueued, $roots_seen with an outcome; $missing spawned jobs without a final outcome; $orphans outcomes no parent lists"
echo "  duplicate rows   $duplicates (movies, reviews, job outcomes by their keys)"
echo "  lag at the end   $lag"
echo "  dead letters by reason:"
sql "SELECT count(*) || '  ' || stage || '  ' || kind || '  ' || coalesce(error_kind, '') || '  ' || left(coalesce(error, ''), 90) FROM job_outcomes WHERE outcome = 'dead-lettered' GROUP BY stage, kind, error_kind, left(coalesce(error, ''), 90) ORDER BY count(*) DESC LIMIT 10" | sed 's/^/    /'
lineage_details "$missing" "$orphans"
report_status=0
python3 "$root/scripts/fault-net-report.py" "$logs" --goal-seconds 15 || report_status=$?
summary() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$logs/summary.json" "$1"; }
rerun=$(summary rerun 2>/dev/null || echo unknown)
regressions=$(summary lineage_regressions 2>/dev/null || echo unknown)
max_unowned=$(summary max_unowned_s 2>/dev/null || echo unknown)
drain_s=$(summary drain_s 2>/dev/null || echo unknown)

failures=()
((report_status == 0)) || failures+=("the report script failed (exit $report_status)")
undrained=$(awk -F'\t' '$2 ~ /^wave-drained / && $2 !~ / 0$/' "$logs/events.tsv" | wc -l)
((undrained == 0)) || failures+=("$undrained waves did not drain (drain-*.out)")
((lost == 0)) || failures+=("$lost jobs lost ($missing spawned without a final outcome, $((root_count - roots_seen)) roots without an outcome)")
((retrying == 0)) || failures+=("$retrying jobs still wait for a retry")
((unexplained == 0)) || failures+=("$unexplained dead letters without a reason")
((outage_dead == 0)) || failures+=("$outage_dead dead letters for an outage (the store, the image store or the broker down)")
((duplicates == 0)) || failures+=("$duplicates duplicate rows")
[[ "$lag" == 0 ]] || failures+=("lag at the end is $lag, not 0")
[[ "$regressions" == 0 ]] || failures+=("$regressions lineage regressions (done or dead-lettered back to retried)")
((short == 1 || fetch_jobs >= 10000)) || failures+=("only $fetch_jobs fetch jobs: the long form needs at least 10,000 (raise FAULT_NET_PAGES)")
if ((${#failures[@]})); then
    printf 'FAILED: %s\n' "${failures[@]}"
else
    echo "OK: every job accounted for, none lost, no duplicates, no lineage regression, drained to zero lag."
fi
echo "fault-net: jobs=$jobs lost=$lost duplicates=$duplicates dead_lettered_during_outage=$outage_dead rerun=$rerun lineage_regressions=$regressions max_unowned_s=$max_unowned drain_s=$drain_s"
((${#failures[@]} == 0))
exit
}
