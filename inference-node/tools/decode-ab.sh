#!/usr/bin/env bash
# Decode A/B of the node's Q4_0/Q4_K/Q6_K kernels: `bench` with the single-row kernels (-Dinference.nibbleStreams=false)
# and with the four-stream kernels (default), interleaved, PAIRS times per file (run by hand, not in CI).
#   inference-node/tools/decode-ab.sh FILE... (GGUF files, e.g. from make-model --preset 1b-shaped --type q4_k_m)
# Environment: PAIRS (2), PROMPT (16), DECODE (32), THREADS (2), JAVA_HOME (a JDK 25). Read "decode CPU time" (CPU-ms
# per token, all threads): on a loaded machine tokens/s and the fraction of the bound say more about the load.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-2}
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
jar=$(ls inference-node/target/inference-node-*.jar 2>/dev/null | grep -v sources | head -1 || true)
if [ -z "$jar" ]; then
  ./mvnw -B -q -pl inference-node package -DskipTests
  jar=$(ls inference-node/target/inference-node-*.jar | grep -v sources | head -1)
fi
for file in "$@"; do
  for pair in $(seq "$PAIRS"); do
    for streams in false true; do
      echo "== $(basename "$file") nibbleStreams=$streams, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S)"
      "$JAVA" --add-modules jdk.incubator.vector -XX:+UseSerialGC -Xms32m -Dinference.nibbleStreams=$streams -jar "$jar" \
          bench --model "$file" --prompt-tokens "${PROMPT:-16}" --decode-tokens "${DECODE:-32}" --threads "${THREADS:-2}" \
          --bandwidth-mb 256 2>/dev/null | grep -E '^decode CPU time|^decode: [0-9]+ tokens at'
    done
  done
done
