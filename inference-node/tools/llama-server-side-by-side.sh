#!/usr/bin/env bash
# Decode and prompt tokens/s of the node (`bench`) and of llama.cpp's llama-server (built by .ci/llama-cpp.sh) on the
# same GGUF files, interleaved pair by pair: 2 threads, a 512-token prompt, 32 decode tokens. llama-server answers one
# /completion per pair (a fresh server per file, warmed up by one short request) and reports its own timings.
#   inference-node/tools/llama-server-side-by-side.sh [--pairs 3] FILE...
# LLAMA_CPP_BIN: the directory with llama-server (default: MACFLEET_LLAMA_CPP_BIN, else .ci/llama-cpp.sh's output).
# LLAMA_SERVER_OPTS: more llama-server options (e.g. "--poll 0": its threads sleep instead of spinning between tasks,
# which on a machine loaded by other processes keeps its decode from collapsing). THREADS: threads of each engine (2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pairs=3
if [[ "${1:-}" == "--pairs" ]]; then pairs=$2; shift 2; fi
bin="${LLAMA_CPP_BIN:-${MACFLEET_LLAMA_CPP_BIN:-$("$root/.ci/llama-cpp.sh")}}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
classes="$root/inference-node/target/classes"
median() { python3 -c 'import sys,statistics; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
echo "date $(date -u +%FT%TZ); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for model in "$@"; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    log=$(mktemp)
    LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/llama-server" -m "$model" --host 127.0.0.1 --port "$port" -t "${THREADS:-2}" -c 1024 -np 1 ${LLAMA_SERVER_OPTS:-} >"$log" 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    for _ in $(seq 600); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        sleep 0.5
    done
    prompt=$(python3 -c 'print([1] + [1 + (i * 37) % 500 for i in range(511)])')
    request() { curl -sf "http://127.0.0.1:$port/completion" -H 'Content-Type: application/json' -d "{\"prompt\": $1, \"n_predict\": $2, \"temperature\": 0, \"top_k\": 1, \"ignore_eos\": true, \"cache_prompt\": false}"; }
    request "[1, 2, 3, 4]" 4 >/dev/null
    node_decode=(); node_prompt=(); llama_decode=(); llama_prompt=()
    for pair in $(seq "$pairs"); do
        out=$("$java" --add-modules jdk.incubator.vector -cp "$classes" io.macfleet.node.Main bench --model "$model" \
            --prompt-tokens 512 --decode-tokens 32 --threads "${THREADS:-2}" --bandwidth-mb 256 2>&1)
        nd=$(sed -n 's/^decode: 32 tokens at \([0-9.]*\) tokens.*/\1/p' <<<"$out")
        np=$(sed -n 's/^prompt processing: 512 tokens in [0-9.]* s = \([0-9.]*\) tokens.*/\1/p' <<<"$out")
        kv=$(grep '^KV cache per token' <<<"$out" || true)
        answer=$(request "$prompt" 32)
        lp=$(python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print("%.2f" % t["prompt_per_second"])' <<<"$answer")
        ld=$(python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print("%.2f" % t["predicted_per_second"])' <<<"$answer")
        echo "$(basename "$model") pair $pair: node decode $nd prompt $np | llama.cpp decode $ld prompt $lp (load $(cut -d' ' -f1 /proc/loadavg))" >&2
        node_decode+=("$nd"); node_prompt+=("$np"); llama_decode+=("$ld"); llama_prompt+=("$lp")
    done
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -f "$log"
    nd=$(median "${node_decode[@]}"); ld=$(median "${llama_decode[@]}"); np=$(median "${node_prompt[@]}"); lp=$(median "${llama_prompt[@]}")
    echo "$(basename "$model"): decode node $nd llama.cpp $ld ($(python3 -c "print('%.2fx' % ($nd / $ld))")); prompt node $np llama.cpp $lp ($(python3 -c "print('%.2fx' % ($np / $lp))")); $kv"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
