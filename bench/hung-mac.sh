#!/usr/bin/env bash
# Issue 13's target for a hung Mac, measured as a user meets it, through the packaged CLI (./macfleet): a demo of
# N simulated Macs (default 20), one of them hung (`macfleet demo fault studio-02 hang`: SSH accepts, commands never
# answer), then `macfleet facts --command-timeout 5` against the demo's database, ROUNDS times (default 3). Prints
# each call's wall time and exit code and the median; the target is at most 8 s for 1 hung Mac of 20.
# Usage: bench/hung-mac.sh [MACHINES] [ROUNDS] [COMMAND_TIMEOUT_SECONDS]
# The launcher builds the application on first use; the demo runs on a free HTTP port, free SSH ports and loopback
# addresses 127.0.9.11 and up, with its state in a temporary directory, so a demo of your own is left alone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
machines="${1:-20}"
rounds="${2:-3}"
timeout_seconds="${3:-5}"
hung="${HUNG_MACHINE:-studio-02}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
cd "$here"

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')   load before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"
if [[ ! -f target/quarkus-app/quarkus-run.jar && -z "${MACFLEET_JAR:-}" ]]; then
    echo "building the packaged application (./mvnw -B -q -f control-plane.xml package -DskipTests) ..."
    ./mvnw -B -q -f control-plane.xml package -DskipTests
fi

dir="$(mktemp -d -t macfleet-hung-mac-XXXXXX)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
demo_pid=""
cleanup() {
    if [[ -n "$demo_pid" ]] && kill -0 "$demo_pid" 2>/dev/null; then
        kill "$demo_pid" 2>/dev/null || true
        wait "$demo_pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

echo "starting a demo of $machines simulated Macs (state in $dir, HTTP $url) ..."
MACFLEET_HTTP_PORT="$port" MACFLEET_HTTP_HOST=127.0.0.1 ./macfleet demo --machines "$machines" --dir "$dir" --ssh-port 0 \
    --base-address 127.0.9.11 --no-node >"$dir/demo.log" 2>&1 &
demo_pid=$!
# Ready when the token is written and the simulator's control API answers with it (after the start-up gathering).
deadline=$((SECONDS + 600))
until [[ -s "$dir/api-token" ]] && curl -sf -o /dev/null -H "Authorization: Bearer $(cat "$dir/api-token")" "$url/api/v1/simulator/machines"; do
    if ! kill -0 "$demo_pid" 2>/dev/null || ((SECONDS > deadline)); then
        echo "the demo did not come up:" >&2
        tail -40 "$dir/demo.log" >&2
        exit 1
    fi
    sleep 1
done
echo "demo up after ${SECONDS} s"

./macfleet demo fault "$hung" hang --url "$url" --token-file "$dir/api-token"

# The start-up alone, for reading the figures on a busy machine: a one-shot command that touches no Mac.
start="$(date +%s.%N)"
./macfleet --version >/dev/null
printf 'for comparison, macfleet --version: %.2f s wall\n' "$(echo "$(date +%s.%N) - $start" | bc -l)"

# And a call that opens the demo's database but reaches no Mac: what a CLI call costs besides the gathering.
start="$(date +%s.%N)"
MACFLEET_HOME="$dir" ./macfleet facts show studio-01 >/dev/null
printf 'for comparison, macfleet facts show studio-01 (database only, no SSH): %.2f s wall\n' "$(echo "$(date +%s.%N) - $start" | bc -l)"

times=()
for round in $(seq 1 "$rounds"); do
    start="$(date +%s.%N)"
    set +e
    MACFLEET_HOME="$dir" ./macfleet facts --command-timeout "$timeout_seconds" >"$dir/facts-$round.out" 2>&1
    code=$?
    set -e
    end="$(date +%s.%N)"
    wall="$(echo "$end - $start" | bc -l)"
    times+=("$wall")
    printf 'round %d: macfleet facts --command-timeout %s: %.2f s wall, exit code %d\n' "$round" "$timeout_seconds" "$wall" "$code"
    grep -E "^$hung\b" "$dir/facts-$round.out" | head -1 | cut -c1-160 || true
    # The CLI's own figure for the gathering (the rest of the wall time is the JVM, the database and printing).
    grep -E "^facts: " "$dir/facts-$round.out" | head -1 || true
    if ((code != 0 && code != 1)) || ! grep -qE "^$hung\b" "$dir/facts-$round.out"; then
        echo "unexpected output:" >&2
        cat "$dir/facts-$round.out" >&2
        exit 1
    fi
done
median="$(printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
printf 'median of %d: %.2f s wall for 1 hung Mac of %d (target: at most 8 s)\n' "$rounds" "$median" "$machines"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
