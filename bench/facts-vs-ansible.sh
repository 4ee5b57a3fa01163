#!/usr/bin/env bash
# macfleet's facts gathering against ansible-playbook on the same simulated Macs (issue 13): a CLI call's gathering
# (new connections), a round of the service's observation loop (connections kept open), and ansible-playbook with
# gather_facts false, one raw task per command macfleet runs, ControlPersist on and forks = macfleet's parallelism.
# Medians per size, with the load average; record the figures in docs/benchmarks.md.
# Usage: bench/facts-vs-ansible.sh [SIZES] [ROUNDS]   (default "20,200" and 3; needs Debian's ansible-core:
#        sudo apt-get install -y ansible-core). The whole `macfleet facts` CLI call adds the JVM start-up that
#        bench/cli-startup.sh measures. ANSIBLE_LIMIT=SECONDS (default 300) stops an ansible-playbook run that takes
#        longer (at 200 Macs on a busy machine it can take an hour); the macfleet figures are printed first regardless.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sizes="${1:-20,200}"
rounds="${2:-3}"
if ! command -v ansible-playbook >/dev/null; then
    echo "ansible-playbook not found: sudo apt-get install -y ansible-core" >&2
    exit 2
fi
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')   load before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"
echo "ansible: $(ansible-playbook --version 2>/dev/null | sed -n 1p)"
cd "$here"
# The build needs Java 25 (the same default as bench/cli-startup.sh).
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Each size's figures are printed as soon as they are measured (a long Ansible run at 200 Macs cannot hide the rest).
# A single ansible-playbook run longer than ANSIBLE_LIMIT seconds (default 300) is stopped and reported as such.
set +e
./mvnw -B -o -q -pl control-plane.xml test -Dtest=FactsVersusAnsibleBenchmark -Dmacfleet.benchmarks=true \
        -Dbenchmark.macs="$sizes" -Dbenchmark.rounds="$rounds" -Dbenchmark.ansible-limit="${ANSIBLE_LIMIT:-300}" \
        -Dsurefire.failIfNoSpecifiedTests=false 2>&1 | tee "$log" | grep --line-buffered -E '^(  |[0-9]+ Macs)'
maven="${PIPESTATUS[0]}"
set -e
if ((maven != 0)); then
    tail -40 "$log" >&2
    echo "benchmark failed (see above and target/surefire-reports)" >&2
    exit 1
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
