#!/usr/bin/env bash
# The inference node and llama.cpp side by side on the same GGUF files (run by hand, not in CI).
# Installs node-llama-cpp (prebuilt llama.cpp CPU backends) from npm into a temporary directory, writes the 1b-shaped
# test models with make-model, then runs both engines on each file, interleaved (node, llama.cpp, node, ...), PAIRS
# times, and prints the median prompt-processing and decode speeds, their ratios and the peak RSS of each.
#
#   inference-node/tools/side-by-side.sh [TYPES...]     (default: q8_0 q4_0 q4_k_m q6_k qwen3moe)
# Environment: PAIRS (3), THREADS (2), PROMPT (512), DECODE (32), MODELS (directory for the files, default a
# temporary one; existing files are reused), LLAMA_DIR (a directory to install node-llama-cpp into and reuse, default a
# temporary one), JAVA_HOME (a JDK 25).
# "qwen3moe" is the 1b-shaped-active mixture of experts in Q8_0. Quote the figures with the date, `uptime` and the CPU.
# A subset, reusing files and the install:  PAIRS=1 MODELS=/tmp/kq LLAMA_DIR=/tmp/nlc side-by-side.sh q4_0 q4_k_m
# (one pair of the 1b-shaped Q4_0 file took 160 s at load 17 to 19 on the 2-core VM, 2026-11-24; less when quiet;
# each pair's time goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-3}
THREADS=${THREADS:-2}
PROMPT=${PROMPT:-512}
DECODE=${DECODE:-32}
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
TYPES=("$@")
[ ${#TYPES[@]} -eq 0 ] && TYPES=(q8_0 q4_0 q4_k_m q6_k qwen3moe)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MODELS=${MODELS:-$WORK}
mkdir -p "$MODELS"

jar=$(ls inference-node/target/inference-node-*.jar 2>/dev/null | grep -v sources | head -1 || true)
if [ -z "$jar" ]; then
  ./mvnw -B -q -pl inference-node package -DskipTests
  jar=$(ls inference-node/target/inference-node-*.jar | grep -v sources | head -1)
fi
node_cmd=("$JAVA" --add-modules jdk.incubator.vector -XX:+UseSerialGC -Xms32m -jar "$jar")

LLAMA=${LLAMA_DIR:-$WORK/llama}
if [ ! -d "$LLAMA/node_modules/node-llama-cpp" ]; then
  echo "installing node-llama-cpp 3.22.1 into $LLAMA" >&2
  mkdir -p "$LLAMA"
  (cd "$LLAMA" && npm init -y >/dev/null && npm install --no-audit --no-fund node-llama-cpp@3.22.1 >/dev/null 2>&1)
fi
cp inference-node/tools/llama-cpp-bench.mjs "$LLAMA/"

for type in "${TYPES[@]}"; do
  file="$MODELS/1b-$type.gguf"
  if [ ! -f "$file" ]; then
    if [ "$type" = qwen3moe ]; then
      "${node_cmd[@]}" make-model --preset 1b-shaped --arch qwen3moe --type q8_0 --seed 7 --out "$file" >&2
    else
      "${node_cmd[@]}" make-model --preset 1b-shaped --type "$type" --seed 7 --out "$file" >&2
    fi
  fi
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); threads: $THREADS; prompt $PROMPT, decode $DECODE tokens, $PAIRS interleaved pairs"
printf '%-9s %28s %28s %22s\n' type "prompt tok/s node/llama (x)" "decode tok/s node/llama (x)" "peak RSS MB node/llama"
for type in "${TYPES[@]}"; do
  file="$MODELS/1b-$type.gguf"
  : > "$WORK/node.txt"; : > "$WORK/llama.txt"
  for pair in $(seq "$PAIRS"); do
    echo "$type pair $pair: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    started=$SECONDS
    "${node_cmd[@]}" bench --model "$file" --prompt-tokens "$PROMPT" --decode-tokens "$DECODE" --threads "$THREADS" \
        --bandwidth-mb 256 2>/dev/null | awk '
          /^prompt processing:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s") p = $(i - 1) }
          /^decode: [0-9]+ tokens at/ { d = $5 }
          /^peak RSS/ { r = $4 }
          END { print p, d, r }' >> "$WORK/node.txt"
    (cd "$LLAMA" && node llama-cpp-bench.mjs "$file" "$PROMPT" "$DECODE" "$THREADS" 2>/dev/null) \
        | awk '/^llama.cpp/ { print $3, $5, $7 }' >> "$WORK/llama.txt"
    echo "$type pair $pair: $((SECONDS - started)) s" >&2
  done
  paste -d' ' "$WORK/node.txt" "$WORK/llama.txt" | sed "s/^/$type each pair (node prompt decode RSS, llama.cpp prompt decode RSS): /" >&2
  np=$(cut -d' ' -f1 "$WORK/node.txt" | median); nd=$(cut -d' ' -f2 "$WORK/node.txt" | median); nr=$(cut -d' ' -f3 "$WORK/node.txt" | median)
  lp=$(cut -d' ' -f1 "$WORK/llama.txt" | median); ld=$(cut -d' ' -f2 "$WORK/llama.txt" | median); lr=$(cut -d' ' -f3 "$WORK/llama.txt" | median)
  printf '%-9s %28s %28s %22s\n' "$type" \
      "$(awk -v a="$np" -v b="$lp" 'BEGIN { printf "%.1f / %.1f (%.2f)", a, b, a / b }')" \
      "$(awk -v a="$nd" -v b="$ld" 'BEGIN { printf "%.2f / %.2f (%.2f)", a, b, a / b }')" \
      "$nr / $lr"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
