// llama.cpp's side of side-by-side.sh (run by hand, not in CI): loads one GGUF file through the npm package
// node-llama-cpp (prebuilt CPU backend), evaluates a prompt of PROMPT tokens in one batch, then decodes DECODE tokens
// greedily, and prints one line: prompt tokens/s, decode tokens/s (mean), peak RSS in MB.
//   node llama-cpp-bench.mjs FILE PROMPT DECODE THREADS
import {getLlama} from "node-llama-cpp";

const [file, promptArg, decodeArg, threadsArg] = process.argv.slice(2);
const promptTokens = Number(promptArg ?? 512), decodeTokens = Number(decodeArg ?? 32), threads = Number(threadsArg ?? 2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: file});
const context = await model.createContext({contextSize: promptTokens + decodeTokens + 16, batchSize: promptTokens, threads});
const sequence = context.getSequence();
// Ordinary text, repeated up to the prompt length (as the node's bench builds its prompt from text).
const text = "The quick brown fox jumps over the lazy dog while the cluster of Mac Studios serves a model. ";
let tokens = [model.tokens.bos];
while (tokens.length < promptTokens) {
  tokens = tokens.concat(model.tokenize(text, false));
}
tokens = tokens.slice(0, promptTokens);
const start = process.hrtime.bigint();
let first = 0n;
let count = 0;
for await (const token of sequence.evaluate(tokens, {temperature: 0})) {
  if (count === 0) {
    first = process.hrtime.bigint();
  }
  count++;
  if (count > decodeTokens) {
    break;
  }
}
const end = process.hrtime.bigint();
// The generator ends early at an end-of-generation token: rate the tokens actually decoded, and say so.
const decoded = Math.max(0, count - 1);
if (decoded < decodeTokens) {
  console.error(`llama.cpp stopped after ${decoded} of ${decodeTokens} decode tokens`);
}
const promptSeconds = Number(first - start) / 1e9;
const decodeSeconds = Number(end - first) / 1e9;
const peakMb = process.resourceUsage().maxRSS / 1024;
console.log(`llama.cpp prompt ${(promptTokens / promptSeconds).toFixed(2)} decode ${(decoded / decodeSeconds).toFixed(2)} rss ${peakMb.toFixed(0)}`);
await context.dispose();
await model.dispose();
