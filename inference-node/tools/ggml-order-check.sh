#!/usr/bin/env bash
# Bit-for-bit check of GgmlOrderKernels (-Dinference.ggmlOrder=true) against llama.cpp's libggml-cpu (run by hand):
#   MACFLEET_LLAMA_CPP_BIN=DIR inference-node/tools/ggml-order-check.sh    (DIR: the llama-server of .ci/llama-cpp.sh)
# Compiles ggml-order-check/ggml_dots.c against DIR's libggml-cpu.so (gcc), writes 64 rows of Q4_K, Q5_K and Q6_K
# weights and one activation row with NodeDots.java, and counts the rows whose float bits differ, for the ggml-order
# kernels and for the default float kernels; then ggml_v_expf (vector_exp.c) against GgmlOrderKernels.vectorExp over
# [-100, 100]. Needs inference-node/target/classes (mvnw compile).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${MACFLEET_LLAMA_CPP_BIN:?set MACFLEET_LLAMA_CPP_BIN to the directory of llama-server and libggml-cpu.so}
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O1 -o "$work/ggml_dots" inference-node/tools/ggml-order-check/ggml_dots.c -L"$bin" -lggml-cpu -lggml-base -Wl,-rpath,"$bin"
# ggml_dots.c calls the plain ggml_vec_dot_*_q8_K, so the node must not take llama.cpp's repacked Q4_K order here
for order in true false; do
  "$JAVA" --add-modules jdk.incubator.vector -Dinference.ggmlOrder=$order -Dinference.ggmlRepack=false \
    -cp inference-node/target/classes \
    inference-node/tools/ggml-order-check/NodeDots.java "$work" 2>/dev/null > "$work/node-$order.txt"
done
"$work/ggml_dots" "$work" > "$work/ggml.txt"
for order in true false; do
  for type in Q4_K Q5_K Q6_K; do
    paste <(grep "^$type" "$work/node-$order.txt" | tr ' ' '\n' | tail -n +2) <(grep "^$type" "$work/ggml.txt" | tr ' ' '\n' | tail -n +2) \
      | awk -v t="$type" -v o="$order" '$1 != $2 { d++ } END { printf "ggmlOrder=%s %s: %d of %d rows differ from ggml-cpu\n", o, t, d + 0, NR }'
  done
done
gcc -O2 -mavx2 -mfma -o "$work/vector_exp" inference-node/tools/ggml-order-check/vector_exp.c
"$work/vector_exp" > "$work/vector_exp.txt"
"$JAVA" -cp inference-node/target/classes inference-node/tools/ggml-order-check/VectorExp.java "$work/vector_exp.txt"
