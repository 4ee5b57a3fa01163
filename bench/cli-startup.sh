#!/usr/bin/env bash
# Start-up cost of one-shot `macfleet` commands: wall time and CPU time (user+sys) of N runs each, median.
# CPU time is less sensitive to other load on the machine than wall time; the load average is printed with the
# figures. Usage: bench/cli-startup.sh [RUNS]   (default 7; needs a built target/quarkus-app, e.g. ./macfleet --version)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-7}"
launcher="$here/macfleet"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$launcher" inventory example "$scratch/inventory" >/dev/null

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

measure() {
    local label="$1"; shift
    local walls=() cpus=()
    "$@" >/dev/null 2>&1 || true   # warm the page cache; not counted
    for ((i = 0; i < runs; i++)); do
        /usr/bin/time -f '%e %U %S' -o "$scratch/time" "$@" >/dev/null 2>&1 || true
        read -r wall user sys < "$scratch/time"
        walls+=("$wall")
        cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')")
    done
    printf '%-40s wall median %5.2f s (min %5.2f, max %5.2f)   cpu median %5.2f s   runs %d\n' "$label" \
        "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${walls[@]}" | sort -g | head -1)" \
        "$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)" "$(printf '%s\n' "${cpus[@]}" | median)" "$runs"
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')   load before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"
echo "java: $("${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java" -version 2>&1 | head -1)"
measure "macfleet --version" "$launcher" --version
measure "macfleet inventory validate EXAMPLE" "$launcher" inventory validate "$scratch/inventory"
measure "macfleet serve --help" "$launcher" serve --help
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
