#!/usr/bin/env bash
# `make bench-kafka`: throughput of the Swift Kafka layer (MarqueeKafka, via Benchmarks/KafkaBenchmark) against
# librdkafka's own rdkafka_performance (built from the same librdkafka source), on the same broker, in the same
# run, side by side. See BENCHMARKS.md.
#
#   produce  N messages of 200 bytes, acks=all, idempotent, linger 5 ms, batches of up to 10,000 messages,
#            a queue of 100,000 messages, no compression; timed from the first send to the last acknowledgement.
#   consume  N messages with a fresh consumer group from the earliest offset (session timeout 6 s, heartbeat 1 s);
#            timed from the first message received to the Nth (the group join is not timed). Both consumers read
#            the same topic, which holds exactly N messages.
#
# Each round uses fresh topics (4 partitions) and runs the C and the Swift program one after the other (the order
# alternates between rounds). The machine is noisy and drifts between rounds, so each round's ratio compares two
# runs made side by side, and the summary's ratios are the medians of the rounds' ratios (the figures printed
# with them are the medians of each program's rates).
#
# Environment: BENCH_COUNT (500000), BENCH_ROUNDS (7), MARQUEE_KAFKA_PORT (19092).
# The last line is machine-readable:
#   bench-kafka: produce_ratio=X.XX consume_ratio=Y.YY swift_produce=… c_produce=… swift_consume=… c_consume=…
# (ratio = Swift msgs/s ÷ C msgs/s).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

count="${BENCH_COUNT:-500000}"
rounds="${BENCH_ROUNDS:-7}"
brokers="127.0.0.1:${MARQUEE_KAFKA_PORT:-19092}"
scratch="$root/.build-release"   # not .build: that one belongs to the everyday debug builds
bench="$scratch/release/KafkaBenchmark"
rdperf="$root/.deps/rdkafka/bin/rdkafka_performance"
logs="$root/var/bench-kafka"
mkdir -p "$logs"

say() { printf '\033[1mbench-kafka:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ "$count" =~ ^[1-9][0-9]*$ ]] || die "BENCH_COUNT must be a positive number"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive number"
[ -x "$rdperf" ] || die "$rdperf is missing: run scripts/setup.sh"

# --- stack: start what is not running; stop it at the end only if this script started all of it -----------
started=0
topics=()
cleanup() {
    local status=$?
    if [ ${#topics[@]} -gt 0 ] && [ -x "$bench" ]; then
        "$bench" delete-topics --brokers "$brokers" "${topics[@]}" >/dev/null 2>&1 || true
    fi
    if [ "$started" = 1 ]; then scripts/stack.sh down >/dev/null 2>&1 || true; fi
    exit "$status"
}
trap cleanup EXIT
stack_status=$(scripts/stack.sh status 2>/dev/null || true)
if ! grep -q '^kafka *up' <<<"$stack_status" || ! grep -q '^postgres *up' <<<"$stack_status"; then
    if ! grep -q ' up ' <<<"$stack_status"; then
        say "starting the local stack (stopped again at the end)"
        started=1
    else
        say "starting the rest of the local stack (left running at the end: part of it was already up)"
    fi
    scripts/stack.sh up >/dev/null
fi

# --- build -----------------------------------------------------------------------------------------------
say "building KafkaBenchmark (release, scratch path ${scratch#"$root"/})"
if ! swift build -c release --scratch-path "$scratch" --product KafkaBenchmark >"$logs/build.log" 2>&1; then
    tail -n 40 "$logs/build.log" >&2
    die "the build failed; see ${logs#"$root"/}/build.log"
fi

# --- the two programs ------------------------------------------------------------------------------------
# librdkafka settings the Swift layer uses (KafkaConfiguration / KafkaProducerConfiguration defaults), given
# to rdkafka_performance too so that both drive librdkafka the same way. rdkafka_performance's own defaults
# differ (linger.ms=1000, queued.min.messages=1000000); they are overridden here.
c_common=(-b "$brokers" -X client.id=marquee-bench -X reconnect.backoff.max.ms=1000)
# -D: rdkafka_performance otherwise hands librdkafka one static payload buffer for every message, without a
# copy; the Swift layer copies each message's bytes once (RD_KAFKA_MSG_F_COPY: Swift owns its arrays), so the C
# program is asked to give each message a buffer of its own too (malloc + memcpy, RD_KAFKA_MSG_F_FREE).
c_produce_settings=(
    -D -a -1 -X enable.idempotence=true
    -X linger.ms=5 -X batch.num.messages=10000 -X queue.buffering.max.messages=100000
    -X delivery.timeout.ms=30000 -X compression.codec=none
)
c_consume_settings=(
    -X auto.offset.reset=earliest -X session.timeout.ms=6000 -X heartbeat.interval.ms=1000
    -X max.poll.interval.ms=300000 -X auto.commit.interval.ms=1000 -X queued.min.messages=100000
)

# Each prints msgs/s on standard output; the full output goes to var/bench-kafka/.
c_produce() { # topic log
    "$rdperf" -P -t "$1" -s 200 -c "$count" "${c_common[@]}" "${c_produce_settings[@]}" >"$2" 2>&1 \
        || die "rdkafka_performance produce failed; see $2"
    local line
    line=$(grep ' messages produced ' "$2" | tail -n1) || die "no summary from rdkafka_performance; see $2"
    [[ "$line" == *" $count delivered "*", 0 failed)"* ]] || die "rdkafka_performance did not deliver all $count messages: $line"
    sed -E 's/.* ([0-9]+) msgs\/s.*/\1/' <<<"$line"
}
c_consume() { # topic group log
    timeout 120 "$rdperf" -G "$2" -t "$1" -c "$count" -q "${c_common[@]}" "${c_consume_settings[@]}" >"$3" 2>&1 \
        || die "rdkafka_performance consume failed; see $3"
    local line
    line=$(grep ' consumed in ' "$3" | tail -n1) || die "no summary from rdkafka_performance; see $3"
    [[ "$line" == "% $count messages "* ]] || die "rdkafka_performance did not consume $count messages: $line"
    sed -E 's/.* ([0-9]+) msgs\/s.*/\1/' <<<"$line"
}
swift_produce() { # topic log
    "$bench" produce --brokers "$brokers" --topic "$1" --count "$count" --size 200 >"$2" 2>&1 \
        || die "KafkaBenchmark produce failed; see $2"
    grep -oE 'msgs_per_sec=[0-9]+' "$2" | tail -n1 | cut -d= -f2
}
swift_consume() { # topic group log
    "$bench" consume --brokers "$brokers" --topic "$1" --group "$2" --count "$count" >"$3" 2>&1 \
        || die "KafkaBenchmark consume failed; see $3"
    grep -oE 'msgs_per_sec=[0-9]+' "$3" | tail -n1 | cut -d= -f2
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
median_ratio() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# --- rounds ----------------------------------------------------------------------------------------------
run="$(date +%Y%m%d%H%M%S)-$$"
say "$rounds rounds of $count messages (200 bytes) against $brokers; logs in ${logs#"$root"/}/"
sp=(); cp=(); sc=(); cc=(); pr=(); cr=()
for round in $(seq 1 "$rounds"); do
    t_c="bench.$run.r$round.c"
    t_swift="bench.$run.r$round.swift"
    topics+=("$t_c" "$t_swift")
    "$bench" create-topics --brokers "$brokers" --partitions 4 "$t_c" "$t_swift" >/dev/null

    # Produce: each program to its own fresh topic. Odd rounds run C first, even rounds Swift first.
    if ((round % 2)); then
        c_p=$(c_produce "$t_c" "$logs/r$round-c-produce.log")
        s_p=$(swift_produce "$t_swift" "$logs/r$round-swift-produce.log")
    else
        s_p=$(swift_produce "$t_swift" "$logs/r$round-swift-produce.log")
        c_p=$(c_produce "$t_c" "$logs/r$round-c-produce.log")
    fi
    # Consume: both read the topic rdkafka_performance filled (exactly N messages), each in a new group.
    if ((round % 2)); then
        c_c=$(c_consume "$t_c" "bench.$run.r$round.c" "$logs/r$round-c-consume.log")
        s_c=$(swift_consume "$t_c" "bench.$run.r$round.swift" "$logs/r$round-swift-consume.log")
    else
        s_c=$(swift_consume "$t_c" "bench.$run.r$round.swift" "$logs/r$round-swift-consume.log")
        c_c=$(c_consume "$t_c" "bench.$run.r$round.c" "$logs/r$round-c-consume.log")
    fi
    sp+=("$s_p"); cp+=("$c_p"); sc+=("$s_c"); cc+=("$c_c")
    pr+=("$(ratio "$s_p" "$c_p")"); cr+=("$(ratio "$s_c" "$c_c")")
    printf 'round %d: produce swift=%s c=%s ratio=%s | consume swift=%s c=%s ratio=%s (msgs/s)\n' \
        "$round" "$s_p" "$c_p" "$(ratio "$s_p" "$c_p")" "$s_c" "$c_c" "$(ratio "$s_c" "$c_c")"

    # The broker keeps everything in memory: drop this round's topics.
    "$bench" delete-topics --brokers "$brokers" "$t_c" "$t_swift" >/dev/null 2>&1 || true
done

swift_produce_median=$(median "${sp[@]}")
c_produce_median=$(median "${cp[@]}")
swift_consume_median=$(median "${sc[@]}")
c_consume_median=$(median "${cc[@]}")
printf 'median of %d rounds: produce swift=%s c=%s ratio=%s | consume swift=%s c=%s ratio=%s (msgs/s; ratios: median of the rounds)\n' \
    "$rounds" "$swift_produce_median" "$c_produce_median" "$(median_ratio "${pr[@]}")" \
    "$swift_consume_median" "$c_consume_median" "$(median_ratio "${cr[@]}")"
printf 'bench-kafka: produce_ratio=%s consume_ratio=%s swift_produce=%s c_produce=%s swift_consume=%s c_consume=%s\n' \
    "$(median_ratio "${pr[@]}")" "$(median_ratio "${cr[@]}")" \
    "$swift_produce_median" "$c_produce_median" "$swift_consume_median" "$c_consume_median"
