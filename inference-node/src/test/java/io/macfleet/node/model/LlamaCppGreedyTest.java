package io.macfleet.node.model;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The node's greedy tokens against the real llama.cpp ({@code llama-server} built by {@code .ci/llama-cpp.sh} from
 * node-llama-cpp 3.22.1's source: F16 K cache, flash attention on, two threads) on generated deepseek2 files (V3 and
 * V2 routing; F32, Q8_0, Q4_K_M, Q6_K): both get the same prompt token ids, llama.cpp through {@code /completion} with
 * temperature 0, top-k 1 and ignore_eos (which bans its end-of-generation tokens, so the node's loop bans them too).
 * Every file must give the same {@value #STEPS} tokens, near ties included (one file's step 11 is decided by 0.003).
 * <p>
 * That holds because the node runs in ggml's float order ({@code -Dinference.ggmlOrder=true}, this test's own surefire
 * execution): every product, reduction, exp, RoPE angle and rounding as this llama.cpp build computes them on this
 * x86 CPU, so the logits are bit-identical to llama.cpp's at every step (inference-node/tools/ggml-parity.sh compares
 * them, and every named tensor of every layer; docs/inference-node-formats.md). On these small random models the
 * activations' 8-bit rounding turns any last-bit difference into a visible one, so nothing short of that agrees for
 * long (the fast kernels, which sum in other orders, parted after 11 to 16 tokens on the K-quant files). llama.cpp
 * runs with its defaults, so its Q4_K weights are repacked into interleaved 8x8 tiles and multiplied in that layout's
 * order, which the node follows too ({@code GgmlOrderKernels.dotQ4KRepacked}).
 * <p>
 * The binary: {@code MACFLEET_LLAMA_CPP_BIN} (the directory), else the cache {@code .ci/llama-cpp.sh} fills. Absent:
 * skipped with a message, but a failure when {@code CI=true}.
 */
class LlamaCppGreedyTest {
    private static final int STEPS = 32;
    private static Path server;

    @BeforeAll
    static void findLlamaServer() {
        String order = "the node is not in ggml's float order: this test runs in the ggml-order surefire execution"
                + " (-Dinference.ggmlOrder=true)";
        if (!io.macfleet.node.kernel.Kernels.ggmlOrder() && "true".equals(System.getenv("CI"))) {
            Assertions.fail(order + " and CI=true");
        }
        Assumptions.assumeTrue(io.macfleet.node.kernel.Kernels.ggmlOrder(), order);
        server = llamaServer();
        String message = "llama-server not found (set MACFLEET_LLAMA_CPP_BIN or run .ci/llama-cpp.sh)";
        if (server == null && "true".equals(System.getenv("CI"))) {
            Assertions.fail(message + " and CI=true");
        }
        Assumptions.assumeTrue(server != null, message);
    }

    static Path llamaServer() {
        String bin = System.getenv("MACFLEET_LLAMA_CPP_BIN");
        if (bin != null && !bin.isBlank() && Files.isExecutable(Path.of(bin, "llama-server"))) {
            return Path.of(bin, "llama-server");
        }
        String cacheRoot = System.getenv().getOrDefault("MACFLEET_CACHE", System.getProperty("user.home") + "/.cache/macfleet");
        Path index = Path.of(cacheRoot, "llama.cpp", "node-llama-cpp-3.22.1.commit");
        try {
            if (Files.exists(index)) {
                Path candidate = Path.of(cacheRoot, "llama.cpp", Files.readString(index).trim(), "bin", "llama-server");
                if (Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    @ParameterizedTest(name = "{0} {1} {2} seed {3}")
    @CsvSource({"tiny, DEEPSEEK2, f32, 7", "tiny, DEEPSEEK2_SOFTMAX, f32, 7", "tiny, DEEPSEEK2, q8_0, 7",
            "tiny, DEEPSEEK2_SOFTMAX, q8_0, 3", "small, DEEPSEEK2, f32, 7", "small, DEEPSEEK2_SOFTMAX, f32, 7",
            "small, DEEPSEEK2, q8_0, 7", "small, DEEPSEEK2_SOFTMAX, q8_0, 5", "small, DEEPSEEK2, q4_k_m, 3",
            "small, DEEPSEEK2, q4_k_m, 7", "small, DEEPSEEK2_SOFTMAX, q4_k_m, 11", "small, DEEPSEEK2, q6_k, 7",
            "small, DEEPSEEK2, q6_k, 3", "small, DEEPSEEK2_SOFTMAX, q6_k, 13"})
    void greedyTokensMatchLlamaCpp(String preset, ModelGenerator.Architecture architecture, String type, Integer seed,
                                   @TempDir Path directory) throws Exception {
        int fileSeed = seed == null ? 7 : seed;
        Path model = directory.resolve(preset + "-" + architecture + "-" + type + "-" + fileSeed + ".gguf");
        ModelGenerator.write(ModelGenerator.preset(preset), architecture, QuantizationMix.parse(type), fileSeed, model);
        List<Integer> prompt;
        List<Integer> nodeIds = new ArrayList<>();
        List<Integer> runnersUp = new ArrayList<>();
        List<Float> margins = new ArrayList<>();
        try (InferenceEngine engine = InferenceEngine.load(model, 256, 2)) {
            prompt = engine.encodeCompletion("Once upon a time in a quiet workshop");
            DecoderModel decoder = engine.model();
            KvCache cache = decoder.allocateCache(256);
            int[] tokens = new int[prompt.size() + STEPS];
            for (int i = 0; i < prompt.size(); i++) {
                tokens[i] = prompt.get(i);
            }
            // llama.cpp's ignore_eos bans its end-of-generation tokens (here the end of text and <|eot_id|>): so does this loop
            java.util.Set<Integer> banned = new java.util.HashSet<>();
            banned.add(engine.tokenizer().eos());
            banned.add((int) engine.file().integer("tokenizer.ggml.eot_token_id", -1));
            float[] logits = decoder.forward(tokens, 0, prompt.size(), 0, cache);
            for (int i = 0; i < STEPS; i++) {
                for (int id : banned) {
                    if (id >= 0) {
                        logits[id] = Float.NEGATIVE_INFINITY;
                    }
                }
                int best = 0, second = 1;
                for (int j = 0; j < logits.length; j++) {
                    if (logits[j] > logits[best]) {
                        best = j;
                    }
                }
                second = best == 0 ? 1 : 0;
                for (int j = 0; j < logits.length; j++) {
                    if (j != best && logits[j] > logits[second]) {
                        second = j;
                    }
                }
                nodeIds.add(best);
                runnersUp.add(second);
                margins.add(logits[best] - logits[second]);
                int position = prompt.size() + i;
                tokens[position] = best;
                if (i < STEPS - 1) {
                    logits = decoder.forward(tokens, position, 1, position, cache);
                }
            }
        }
        List<Integer> llamaIds = llamaCppGreedy(model, prompt);
        String report = "prompt " + prompt + "\n node " + nodeIds + "\n margins " + margins + "\n llama.cpp " + llamaIds;
        System.out.println(model.getFileName() + ": " + report);
        assertEquals(STEPS, llamaIds.size(), report);
        for (int i = 0; i < STEPS; i++) {
            if (!nodeIds.get(i).equals(llamaIds.get(i))) {
                Assertions.fail("step " + i + ": node " + nodeIds.get(i) + " (runner-up " + runnersUp.get(i)
                        + ", top-2 logit gap " + margins.get(i) + "), llama.cpp " + llamaIds.get(i) + ": " + report);
            }
        }
    }

    private static List<Integer> llamaCppGreedy(Path model, List<Integer> prompt) throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Path log = Files.createTempFile("llama-server", ".log");
        ProcessBuilder builder = new ProcessBuilder(server.toString(), "-m", model.toString(), "--host", "127.0.0.1",
                "--port", Integer.toString(port), "-t", "2", "-c", "256", "-np", "1", "--no-warmup")
                .redirectErrorStream(true).redirectOutput(log.toFile());
        // The binary's RUNPATH names the build directory .ci/llama-cpp.sh removes; its libraries sit beside it.
        String libraries = builder.environment().get("LD_LIBRARY_PATH");
        builder.environment().put("LD_LIBRARY_PATH", server.getParent() + (libraries == null ? "" : ":" + libraries));
        Process process = builder.start();
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try {
            URI base = URI.create("http://127.0.0.1:" + port);
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (true) {
                if (!process.isAlive()) {
                    Assertions.fail("llama-server exited " + process.exitValue() + ":\n" + Files.readString(log));
                }
                try {
                    HttpResponse<String> health = client.send(HttpRequest.newBuilder(base.resolve("/health")).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (health.statusCode() == 200) {
                        break;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                if (System.nanoTime() > deadline) {
                    Assertions.fail("llama-server did not become healthy in 120 s:\n" + Files.readString(log));
                }
                Thread.sleep(200);
            }
            String body = Json.write(Map.of("prompt", prompt, "n_predict", STEPS, "temperature", 0, "top_k", 1,
                    "n_probs", 2, "ignore_eos", true, "cache_prompt", false, "return_tokens", true));
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(base.resolve("/completion"))
                    .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
            @SuppressWarnings("unchecked")
            Map<String, Object> answer = (Map<String, Object>) Json.parse(response.body());
            List<Integer> ids = new ArrayList<>();
            for (Object id : (List<?>) answer.get("tokens")) {
                ids.add(((Number) id).intValue());
            }
            return ids;
        } finally {
            process.destroy();
            process.waitFor();
            Files.deleteIfExists(log);
        }
    }
}
