#!/usr/bin/env bash
# The runtimes side by side on the same 1b-shaped Q8_0 file, one run each, prompt and decode tokens/s as a client sees
# them over the OpenAI API (non-streaming: a request for 1 token gives the prompt time, one for 1+DECODE tokens the
# decode time on top):
#   1. llama.cpp RPC over 4 "Macs": llama-server on one loopback address with --rpc to 3 ggml-rpc-servers, each on its
#      own loopback address (the arguments macfleet's llama.cpp runtime plans, as on 4 simulated Macs);
#   2. one llama-server alone;
#   3. the bundled node, tensor parallel over 4 ranks (inference-node launch-local);
#   4. the bundled node, pipeline parallel over 4 ranks.
# Every process gets 1 thread (4 "Macs" share this host's cores). Quote the output with the date, `uptime` and command.
#
#   bench/llama-cpp-runtimes.sh            Environment: MODEL (default: made in a temporary directory), PROMPT (128
#                                          words), DECODE (32), BASE (loopback base, default 127.0.97)
# The deploy wall time of the llama.cpp runtime to 4 simulated Macs is printed by LlamaCppOnSimulatorTest.
set -euo pipefail
cd "$(dirname "$0")/.."
DECODE=${DECODE:-32}
PROMPT=${PROMPT:-128}
BASE=${BASE:-127.0.97}
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
WORK=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

bin=$(.ci/llama-cpp.sh)
# The libraries are next to the programs (an older cache's RUNPATH names the deleted build tree).
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
jar=$(ls inference-node/target/inference-node-*.jar 2>/dev/null | grep -v sources | head -1 || true)
if [ -z "$jar" ]; then
  ./mvnw -B -q -f inference-node/pom.xml package -DskipTests
  jar=$(ls inference-node/target/inference-node-*.jar | grep -v sources | head -1)
fi
node=("$JAVA" --add-modules jdk.incubator.vector -XX:+UseSerialGC -jar "$jar")
MODEL=${MODEL:-$WORK/1b-q8_0.gguf}
[ -f "$MODEL" ] || "${node[@]}" make-model --preset 1b-shaped --type q8_0 --seed 7 --out "$MODEL" >&2

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_health() {
  for _ in $(seq 600); do
    curl -sf "$1/health" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "no /health at $1" >&2
  return 1
}

# prompt tokens/s and decode tokens/s of the server at $1
measure() {
  python3 - "$1" "$PROMPT" "$DECODE" <<'EOF'
import json, sys, time, urllib.request
base, words, decode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
prompt = " ".join(["the quick brown fox jumps over the lazy dog"] * (words // 9 + 1)).split()[:words]
asked = [0]
def ask(tokens):
    # Each request starts with its own word, so no engine answers from a prompt cache of the request before.
    asked[0] += 1
    text = "request %d: %s" % (asked[0], " ".join(prompt))
    body = json.dumps({"messages": [{"role": "user", "content": text}], "max_tokens": tokens, "temperature": 0,
                       "cache_prompt": False}).encode()
    started = time.monotonic()
    with urllib.request.urlopen(urllib.request.Request(base + "/v1/chat/completions", body, {"Content-Type": "application/json"}),
                                timeout=900) as answer:
        reply = json.load(answer)
    return time.monotonic() - started, reply.get("usage", {})
ask(1)  # warm-up
first, usage = ask(1)
whole, usage_all = ask(decode + 1)
generated = usage_all.get("completion_tokens", decode + 1)
print("%.1f %.2f" % (usage.get("prompt_tokens", len(prompt)) / first, (generated - 1) / (whole - first)))
EOF
}

run() {  # name, then the command that starts a server; $url set by the caller
  local name=$1
  local started=$SECONDS
  wait_health "$url"
  local figures
  figures=$(measure "$url")
  printf '%-44s %14s %14s   (%d s)\n' "$name" "${figures% *}" "${figures#* }" $((SECONDS - started)) 
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); model: $MODEL; prompt $PROMPT words, decode $DECODE tokens; llama.cpp $bin"
printf '%-44s %14s %14s\n' configuration "prompt tok/s" "decode tok/s"

rpc_port=$(free_port)
peers=()
for i in 2 3 4; do
  address="127.10$i.${BASE##*.}.1$i"
  "$bin/ggml-rpc-server" -H "$address" -p "$rpc_port" -t 1 >"$WORK/rpc-$i.log" 2>&1 &
  pids+=($!)
  peers+=("$address:$rpc_port")
done
sleep 1
port=$(free_port)
"$bin/llama-server" -m "$MODEL" --host "$BASE.11" --port "$port" -ngl 99 -t 1 --rpc "$(IFS=,; echo "${peers[*]}")" \
    --tensor-split 1,1,1,1 >"$WORK/server-rpc.log" 2>&1 &
pids+=($!)
url="http://$BASE.11:$port"
run "llama.cpp RPC, 4 Macs (server + 3 rpc-servers)"

port=$(free_port)
"$bin/llama-server" -m "$MODEL" --host "$BASE.11" --port "$port" -t 1 >"$WORK/server.log" 2>&1 &
pids+=($!)
url="http://$BASE.11:$port"
run "llama.cpp, one llama-server"

for parallelism in tensor pipeline; do
  port=$(free_port)
  "${node[@]}" launch-local --model "$MODEL" --ranks 4 --parallelism "$parallelism" --port "$port" --threads-per-rank 1 \
      >"$WORK/node-$parallelism.log" 2>&1 &
  pids+=($!)
  url="http://127.0.0.1:$port"
  run "bundled node, $parallelism 4"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
