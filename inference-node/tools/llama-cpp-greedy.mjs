// Manual cross-check against the reference implementation (not run in CI): loads GGUF files in llama.cpp through
// the npm package node-llama-cpp (prebuilt llama.cpp binaries), tokenizes "Once upon a time" with BOS and prints
// 12 greedy token ids, to compare with the inference node's (see README, "Test models").
//   mkdir /tmp/llama && cd /tmp/llama && npm install node-llama-cpp@3.22.1
//   cp .../inference-node/tools/llama-cpp-greedy.mjs . && node llama-cpp-greedy.mjs /tmp/tiny-f32.gguf
import {getLlama} from "node-llama-cpp";
const llama = await getLlama({gpu: false, build: "never", logLevel: "warn"});
for (const file of process.argv.slice(2)) {
  const model = await llama.loadModel({modelPath: file});
  const prompt = "Once upon a time";
  const tokens = [model.tokens.bos, ...model.tokenize(prompt, false)];
  console.log(file, "loaded: vocab", model.fileInfo?.metadata?.llama?.vocab_size, "trainContextSize", model.trainContextSize, "bos", model.tokens.bos, "eos", model.tokens.eos);
  console.log("prompt tokens", JSON.stringify(tokens));
  const context = await model.createContext({contextSize: 256});
  const sequence = context.getSequence();
  const out = [];
  for await (const token of sequence.evaluate(tokens, {temperature: 0})) {
    out.push(token);
    if (out.length >= 12) break;
  }
  console.log("greedy ids", JSON.stringify(out));
  console.log("greedy text", JSON.stringify(model.detokenize(out)));
  await context.dispose();
  await model.dispose();
}
