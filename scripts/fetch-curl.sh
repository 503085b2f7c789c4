# shellcheck shell=bash
# The curl side of the fetch benchmarks, sourced by scripts/bench-fetch.sh and scripts/bench-fetch-pair.sh so that
# both compare the worker with the same command: `curl --parallel` over the workload's URLs, every answer checked.

# curl_config URLS CONFIG: curl's config fetching each URL of the file URLS (one a line) to /dev/null.
curl_config() { awk '{ printf "url = \"%s\"\noutput = \"/dev/null\"\n", $0 }' "$1" >"$2"; }

# curl_rate CONFIG COUNT CONCURRENCY LOG: fetches CONFIG's COUNT URLs, at most CONCURRENCY at once, with the
# worker's Accept and User-Agent headers; prints requests/s. Fails (the reason on stderr) when curl fails or not
# every answer is 200.
curl_rate() {
    local start end ok
    start="$(date +%s%N)"
    curl --parallel --parallel-max "$3" --parallel-immediate --silent --no-progress-meter --config "$1" \
        --header 'Accept: application/json' \
        --user-agent "${MARQUEE_USER_AGENT:-marquee/1.0 (catalogue ingestion pipeline)}" \
        --write-out '%{http_code}\n' >"$4" 2>&1 || { echo "curl failed; see $4" >&2; return 1; }
    end="$(date +%s%N)"
    ok="$(grep -c '^200$' "$4" || true)"
    [ "$ok" = "$2" ] || { echo "curl got $ok answers 200 of $2; see $4" >&2; return 1; }
    awk -v n="$2" -v ns="$((end - start))" 'BEGIN { printf "%d", n * 1e9 / ns }'
}
