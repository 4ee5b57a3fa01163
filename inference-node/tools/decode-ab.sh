#!/usr/bin/env bash
# Decode A/B of the node's Q4_0/Q4_K/Q6_K kernels, interleaved, PAIRS times per file (run by hand, not in CI):
#   inference-node/tools/decode-ab.sh FILE...   (GGUF files, e.g. from make-model --preset 1b-shaped --type q4_k_m)
# By default `bench` with the single-row kernels (-Dinference.nibbleStreams=false) against the four-stream kernels;
# with A_JAR and B_JAR set, two builds of the node (e.g. a copy of the jar before a change and after it).
# Environment: PAIRS (2), PROMPT (16), DECODE (32), THREADS (2), BANDWIDTH_MB (256), JAVA_HOME (a JDK 25). Read
# "decode CPU time" (CPU-ms per token, all threads): on a loaded machine tokens/s and the fraction of the bound say
# more about the load.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-2}
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
jar=$(ls inference-node/target/inference-node-*.jar 2>/dev/null | grep -v sources | head -1 || true)
if [ -z "${A_JAR:-}" ] && [ -z "$jar" ]; then
  ./mvnw -B -q -pl inference-node package -DskipTests
  jar=$(ls inference-node/target/inference-node-*.jar | grep -v sources | head -1)
fi
if [ -n "${A_JAR:-}" ]; then
  variants=("A:$A_JAR:true" "B:${B_JAR:?B_JAR too}:true")
else
  variants=("nibbleStreams=false:$jar:false" "nibbleStreams=true:$jar:true")
fi
for file in "$@"; do
  for pair in $(seq "$PAIRS"); do
    for variant in "${variants[@]}"; do
      IFS=: read -r label variant_jar streams <<<"$variant"
      echo "== $(basename "$file") $label, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S)"
      "$JAVA" --add-modules jdk.incubator.vector -XX:+UseSerialGC -Xms32m -Dinference.nibbleStreams=$streams -jar "$variant_jar" \
          bench --model "$file" --prompt-tokens "${PROMPT:-16}" --decode-tokens "${DECODE:-32}" --threads "${THREADS:-2}" \
          --bandwidth-mb "${BANDWIDTH_MB:-256}" 2>/dev/null \
          | grep -E '^decode CPU time|^decode: [0-9]+ tokens at|  (down|output \(logits\)) product'
    done
  done
done
