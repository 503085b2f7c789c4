#!/usr/bin/env bash
# The local stack: the tansu Kafka-protocol broker on 127.0.0.1:19092 and a throw-away PostgreSQL on
# 127.0.0.1:15432. Logs and pid files live in var/stack/ (git-ignored).
#
#   scripts/stack.sh up       start what is not running (idempotent), wait until it answers
#   scripts/stack.sh up kafka       only the broker (`make run` on its default SQLite store); `up postgres` only it
#   scripts/stack.sh down     stop both
#   scripts/stack.sh status   say what runs, exit 1 if something is down
#   scripts/stack.sh pause-kafka | resume-kafka      freeze (SIGSTOP) and thaw (SIGCONT) the broker: an outage
#   scripts/stack.sh stop-postgres | start-postgres  an outage of the store (the fault run, scripts/fault-run.sh)
#   scripts/stack.sh pause-postgres | resume-postgres freeze (SIGSTOP) and thaw (SIGCONT) PostgreSQL: its
#                                                    connections stay open and nothing answers on them
#
# Ports come from MARQUEE_KAFKA_PORT (19092) and MARQUEE_POSTGRES_PORT (15432).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="$root/var/stack"
kafka_port="${MARQUEE_KAFKA_PORT:-19092}"
pg_port="${MARQUEE_POSTGRES_PORT:-15432}"
# PostgreSQL refuses to run as root and its user may not enter the project folder: its cluster lives in /tmp.
pg_dir="/tmp/marquee-postgres-$(printf '%s' "$root" | cksum | cut -d' ' -f1)-$pg_port"
tansu="$root/.deps/bin/tansu"
mkdir -p "$state"

say() { printf '\033[1mstack:\033[0m %s\n' "$*" >&2; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
    [ -n "$dir" ] || { echo "PostgreSQL is not installed: run scripts/setup.sh" >&2; exit 1; }
    echo "$dir"
}

wait_for() { # what, seconds, command...
    local what=$1 seconds=$2; shift 2
    for _ in $(seq 1 $((seconds * 10))); do "$@" && return 0; sleep 0.1; done
    say "$what did not come up within ${seconds}s; see $state"
    return 1
}

kafka_up() {
    if alive "$state/tansu.pid"; then return 0; fi
    if port_open "$kafka_port"; then say "port $kafka_port is taken by another process; using it as the broker"; return 0; fi
    [ -x "$tansu" ] || { echo "tansu is not installed: run scripts/setup.sh" >&2; exit 1; }
    say "starting tansu on 127.0.0.1:$kafka_port (log: var/stack/tansu.log)"
    nohup "$tansu" broker \
        --listener-url "tcp://127.0.0.1:$kafka_port" \
        --advertised-listener-url "tcp://127.0.0.1:$kafka_port" \
        >"$state/tansu.log" 2>&1 </dev/null &
    echo $! >"$state/tansu.pid"
    wait_for "tansu" 20 port_open "$kafka_port"
}

postgres_up() {
    local bin; bin=$(pg_bin)
    if [ ! -f "$pg_dir/data/PG_VERSION" ]; then
        say "creating a PostgreSQL cluster in $pg_dir"
        mkdir -p "$pg_dir"
        [ "$(id -u)" = 0 ] && chown postgres: "$pg_dir"
        as_postgres "$bin/initdb" -D "$pg_dir/data" --auth=trust --username=marquee -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    ln -sfn "$pg_dir/postgres.log" "$state/postgres.log"
    if as_postgres "$bin/pg_ctl" -D "$pg_dir/data" status >/dev/null 2>&1; then return 0; fi
    if port_open "$pg_port"; then
        say "port $pg_port is taken by another process; using it as PostgreSQL (it needs the role and database marquee)"
        return 0
    fi
    say "starting PostgreSQL on 127.0.0.1:$pg_port (log: var/stack/postgres.log)"
    as_postgres "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/postgres.log" -w -t 30 \
        -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null
    if ! as_postgres "$bin/psql" -h 127.0.0.1 -p "$pg_port" -U marquee -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname='marquee'" | grep -q 1; then
        as_postgres "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U marquee marquee
    fi
}

kafka_down() {
    if alive "$state/tansu.pid"; then
        say "stopping tansu"
        local pid; pid=$(cat "$state/tansu.pid")
        kill -CONT "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$state/tansu.pid"
}

postgres_down() {
    local bin; bin=$(pg_bin)
    if [ -f "$pg_dir/data/PG_VERSION" ] && as_postgres "$bin/pg_ctl" -D "$pg_dir/data" status >/dev/null 2>&1; then
        say "stopping PostgreSQL"
        postgres_signal CONT 2>/dev/null || true  # a frozen server would never finish stopping
        as_postgres "$bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null
    fi
}

status() {
    local ok=0
    if port_open "$kafka_port"; then echo "kafka      up    127.0.0.1:$kafka_port"; else echo "kafka      down"; ok=1; fi
    if ! ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 && ! port_open "$pg_port"; then
        echo "postgres   not installed (scripts/setup.sh installs it)"; ok=1
    elif as_postgres "$(pg_bin)/pg_ctl" -D "$pg_dir/data" status >/dev/null 2>&1; then
        echo "postgres   up    postgres://marquee@127.0.0.1:$pg_port/marquee"
    elif port_open "$pg_port"; then
        echo "postgres   up    postgres://marquee@127.0.0.1:$pg_port/marquee (another process's server)"
    else
        echo "postgres   down"; ok=1
    fi
    return $ok
}

kafka_signal() { # signal: only a broker this script started (its pid is known)
    alive "$state/tansu.pid" || { echo "stack: the broker was not started by this script; cannot signal it" >&2; exit 1; }
    kill "-$1" "$(cat "$state/tansu.pid")"
}

postgres_signal() { # signal: the postmaster of this script's cluster and every server process it started
    local pid
    pid=$(head -1 "$pg_dir/data/postmaster.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null ||
        { echo "stack: PostgreSQL of this script is not running; cannot signal it" >&2; exit 1; }
    # Children first when freezing (a running postmaster would start new ones), the postmaster first when thawing.
    if [ "$1" = STOP ]; then kill -STOP "$pid"; fi
    pkill "-$1" -P "$pid" || true
    if [ "$1" != STOP ]; then kill "-$1" "$pid"; fi
}

case "${1:-status}" in
    up)
        shift
        if [ "$#" -eq 0 ]; then set -- kafka postgres; fi
        for part in "$@"; do
            case "$part" in
                kafka) kafka_up ;;
                postgres) postgres_up ;;
                *) echo "usage: $0 up [kafka] [postgres]" >&2; exit 2 ;;
            esac
        done
        status || true ;;
    down) kafka_down; postgres_down ;;
    status) status ;;
    pause-kafka) kafka_signal STOP ;;
    resume-kafka) kafka_signal CONT ;;
    stop-postgres) postgres_down ;;
    start-postgres) postgres_up ;;
    pause-postgres) postgres_signal STOP ;;
    resume-postgres) postgres_signal CONT ;;
    *) echo "usage: $0 up|down|status|pause-kafka|resume-kafka|stop-postgres|start-postgres|pause-postgres|resume-postgres" >&2; exit 2 ;;
esac
