#!/usr/bin/env bash
# Bit-for-bit comparison of the node with llama.cpp on one GGUF file (run by hand, not in CI):
#   MACFLEET_LLAMA_CPP_BIN=DIR inference-node/tools/ggml-parity.sh MODEL [STEPS] [--tensors STEP] [--no-repack] [--fast]
# llama.cpp generates STEPS (32) greedy tokens from "Once upon a time in a quiet workshop"; the node is then
# teacher-forced along the same ids and each step's logits are compared bit for bit with llama.cpp's. --tensors STEP
# also compares every layer's named tensors at that step (llama.cpp's eval callback against the node's
# -Dinference.probe dumps), which finds the first operation that parts. The node runs in ggml's float order unless
# --fast. --no-repack: llama.cpp keeps Q4_K weights as they are (its --no-repack), and so does the node
# (-Dinference.ggmlRepack=false); by default both follow llama.cpp's repacked 8x8 order. Needs: g++, python3,
# inference-node/target/classes (mvnw compile), and llama.cpp's headers: LLAMA_CPP_SOURCE, else the source of
# node-llama-cpp 3.22.1 (npm pack, as .ci/llama-cpp.sh) cached beside the binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${MACFLEET_LLAMA_CPP_BIN:?set MACFLEET_LLAMA_CPP_BIN to the directory of llama-server and its libraries}
model=${1:?usage: ggml-parity.sh MODEL [STEPS] [--tensors STEP] [--no-repack] [--fast]}
shift
steps=32 tensors="" order=true repack=true
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tensors) tensors=$2; shift 2 ;;
    --no-repack) export NO_REPACK=1; repack=false; shift ;;
    --fast) order=false; shift ;;
    *) steps=$1; shift ;;
  esac
done
source=${LLAMA_CPP_SOURCE:-${MACFLEET_CACHE:-$HOME/.cache/macfleet}/llama.cpp/source-3.22.1}
if [[ ! -f "$source/include/llama.h" ]]; then
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent node-llama-cpp@3.22.1 >/dev/null && tar xzf node-llama-cpp-3.22.1.tgz package/llama/gitRelease.bundle)
  git -c advice.detachedHead=false clone -q "$work/package/llama/gitRelease.bundle" "$source"
  rm -rf "$work"
fi
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O1 -std=c++17 -o "$work/llama_dump" inference-node/tools/ggml-parity/llama_dump.cpp -I"$source/include" \
  -I"$source/ggml/include" -L"$bin" -lllama -lggml -lggml-base -Wl,-rpath,"$bin"
node() {
  local properties=()
  while [[ $1 == -D* ]]; do properties+=("$1"); shift; done
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Dinference.ggmlOrder=$order \
    -Dinference.ggmlRepack=$repack "${properties[@]}" -cp inference-node/target/classes inference-node/tools/ggml-parity/NodeLogits.java "$@" 2>/dev/null
}
prompt=$(node prompt "$model" "Once upon a time in a quiet workshop")
count=$(wc -w <<< "$prompt")
mkdir -p "$work/llama" "$work/node"
generated=$(GREEDY=$steps "$work/llama_dump" "$model" "$work/llama" "$count" $prompt 2>/dev/null)
echo "prompt ids: $prompt"
echo "llama.cpp's greedy ids: $generated"
forced=$(awk '{ NF--; print }' <<< "$generated")
node compare "$model" "$work/llama" "$count" $prompt $forced
if [[ -n "$tensors" ]]; then
  rm -f "$work/llama"/*
  DUMP_TENSORS=1 "$work/llama_dump" "$model" "$work/llama" "$count" $prompt $forced >/dev/null 2>&1
  node -Dinference.probe="$work/node" compare "$model" "$work/llama" "$count" $prompt $forced >/dev/null
  layers=$(ls "$work/node" | sed -n 's/^t[0-9]*-l_out-\([0-9]*\)\.bin$/\1/p' | sort -n | uniq)
  names=()
  for layer in $layers; do
    names+=(attn_norm-$layer kqv_out-$layer ffn_inp-$layer ffn_norm-$layer ffn_out-$layer l_out-$layer)
  done
  python3 inference-node/tools/ggml-parity/compare_tensors.py "$work/llama" "$work/node" "$tensors" "${names[@]}"
fi
