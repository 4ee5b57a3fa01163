package io.macfleet.node;

import io.macfleet.node.bench.Benchmark;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgufFormatException;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.server.NodeConfig;
import io.macfleet.node.server.NodeServer;
import io.macfleet.node.tokenizer.ChatTemplate;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Command line of the inference node: serve, generate, bench, make-model. Exit codes: 0 ok, 1 failure at run
 * time, 2 bad usage or input (unreadable or invalid model file, bad option).
 */
public final class Main {
    static final int OK = 0, FAILED = 1, USAGE = 2;
    private static final String USAGE_TEXT = """
            usage: inference-node <command> [options]
              serve      --model FILE [--port N] [--host ADDR] [--config FILE] [--context N] [--threads N] [--max-queued N]
                         [--api-key env:NAME|file:PATH] [--model-sha256 HEX]
                         [--cluster FILE --rank N [--cluster-key FILE]] (one rank of a cluster; rank 0 serves the API;
                         the key file, mode 600, is required when the cluster file names non-loopback addresses)
              proxy      --listen ADDRESS:PORT --to HOST:PORT --api-key env:NAME|file:PATH (an authenticating reverse
                         proxy for a server without a key, e.g. mlx_lm.server on loopback; no wildcard --listen)
              launch-local --model FILE --ranks N --parallelism tensor|pipeline [--port P] [--threads-per-rank T]
                         [--context N] (N ranks as processes on loopback; Ctrl-C stops them all)
              cluster-bench [--ranks 2,4] [--sizes-kb 8,32,64] [--iterations N] (all-reduce over loopback TCP)
                         | --model FILE [--tokens 32] [--repeats 3] [--bandwidth-mb N] (decode: 1 process
                           x 1 and x 2 threads, tensor 2, pipeline 2; the performance model against them)
              generate   --model FILE --prompt TEXT [--chat] [--max-tokens N] [--temperature T] [--top-k N]
                         [--top-p P] [--min-p P] [--seed N] [--context N] [--threads N]
              bench      --model FILE [--prompt-tokens 512] [--decode-tokens 32] [--threads N]
                         [--bandwidth-mb N] (default: 4x the last-level cache, at least 512)
              verify-model --model FILE [--model-sha256 HEX] [--context N] (loads the model as serve would, checks its
                         SHA-256, and exits: 0 when it loads; the deploy runs it on one Mac before switching a cluster)
              make-model --preset tiny|small|1b-shaped [--type q8_0|q4_0|q4_k_m|q5_k_m|q6_k|f32|f16|bf16]
                         [--arch llama|qwen2|qwen3|qwen3moe|deepseek2] [--routing sigmoid|softmax] (deepseek2: V3 or V2)
                         [--seed N] --out FILE
            """;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            (args.length == 0 ? err : out).print(USAGE_TEXT);
            return args.length == 0 ? USAGE : OK;
        }
        try {
            Map<String, String> options = options(args);
            Set<String> known = OPTIONS.get(args[0]);
            if (known != null) {
                for (String name : options.keySet()) {
                    if (!known.contains(name)) {
                        // A misspelt option (--temprature 0) must not be ignored: the run would silently do something else.
                        throw new IllegalArgumentException("unknown option --" + name + " for " + args[0] + " (known: "
                                + String.join(", ", known.stream().sorted().map(option -> "--" + option).toList()) + ")");
                    }
                }
            }
            return switch (args[0]) {
                case "serve" -> options.containsKey("cluster") ? ClusterCommands.serve(options, err) : serve(options, err);
                case "proxy" -> proxy(options, err);
                case "launch-local" -> ClusterCommands.launchLocal(options, err);
                case "cluster-bench" -> ClusterCommands.bench(options, out);
                case "generate" -> generate(options, out, err);
                case "bench" -> bench(options, out);
                case "make-model" -> makeModel(options, out);
                case "verify-model" -> verifyModel(options, out, err);
                default -> throw new IllegalArgumentException("unknown command '" + args[0] + "'");
            };
        } catch (GgufFormatException | KvCache.InsufficientMemoryException e) {
            err.println("inference-node: " + e.getMessage());
            return USAGE;
        } catch (NoSuchFileException e) {
            err.println("inference-node: no such file: " + e.getFile());
            return USAGE;
        } catch (IllegalArgumentException e) {
            err.println("inference-node: " + e.getMessage());
            err.print(USAGE_TEXT);
            return USAGE;
        } catch (IOException e) {
            err.println("inference-node: " + e);
            return FAILED;
        } catch (RuntimeException e) {
            err.println("inference-node: failed: " + e);
            return FAILED;
        }
    }

    private static final Set<String> FLAGS = Set.of("chat");

    /** The options each command takes (as in the usage text). */
    private static final Map<String, Set<String>> OPTIONS = Map.of(
            "serve", Set.of("model", "port", "host", "config", "context", "threads", "max-queued", "cluster", "rank", "exit-with-stdin",
                    "cluster-key", "api-key", "model-sha256"),
            "proxy", Set.of("listen", "to", "api-key"),
            "launch-local", Set.of("model", "ranks", "parallelism", "port", "threads-per-rank", "context"),
            "cluster-bench", Set.of("ranks", "sizes-kb", "iterations", "model", "tokens", "repeats", "bandwidth-mb"),
            "generate", Set.of("model", "prompt", "chat", "max-tokens", "temperature", "top-k", "top-p", "min-p", "seed", "context", "threads"),
            "bench", Set.of("model", "prompt-tokens", "decode-tokens", "threads", "bandwidth-mb"),
            "make-model", Set.of("preset", "type", "arch", "routing", "seed", "out"),
            "verify-model", Set.of("model", "model-sha256", "context"));

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            if (FLAGS.contains(name)) {
                options.put(name, "true");
            } else if (i + 1 < args.length) {
                options.put(name, args[++i]);
            } else {
                throw new IllegalArgumentException("option " + arg + " needs a value");
            }
        }
        return options;
    }

    static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return value;
    }

    static long number(Map<String, String> options, String name, long fallback) {
        String value = options.get(name);
        try {
            return value == null ? fallback : Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, got '" + value + "'");
        }
    }

    private static double decimal(Map<String, String> options, String name, double fallback) {
        String value = options.get(name);
        try {
            return value == null ? fallback : Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a number, got '" + value + "'");
        }
    }

    /** --api-key env:NAME|file:PATH and --model-sha256 HEX. */
    static io.macfleet.node.server.NodeSecurity security(Map<String, String> options) throws IOException {
        return io.macfleet.node.server.NodeSecurity.of(options.get("api-key"), options.get("model-sha256"));
    }

    static NodeConfig serveConfig(Map<String, String> options) throws IOException {
        NodeConfig config = options.containsKey("config") ? NodeConfig.read(Path.of(options.get("config"))) : NodeConfig.defaults();
        if (options.containsKey("model")) {
            config = config.withModel(Path.of(options.get("model")));
        }
        if (config.model() == null) {
            throw new IllegalArgumentException("missing --model (or \"model\" in the config file)");
        }
        config = config.withPort((int) number(options, "port", config.port()))
                .withHost(options.getOrDefault("host", config.host()))
                .withContextLength((int) number(options, "context", config.contextLength()))
                .withThreads((int) number(options, "threads", config.threads()))
                .withMaxQueuedRequests((int) number(options, "max-queued", config.maxQueuedRequests()));
        return config;
    }

    private static int serve(Map<String, String> options, PrintStream err) throws IOException {
        if (options.containsKey("cluster-key")) {
            throw new IllegalArgumentException("--cluster-key is for a rank of a cluster (with --cluster FILE --rank N)");
        }
        if (Boolean.parseBoolean(options.getOrDefault("exit-with-stdin", "false"))) {
            // A parent that holds our standard input (the simulator's mlx_lm.server stand-in): when it ends, even by kill -9, so do we.
            Thread.ofPlatform().daemon().name("parent-watch").start(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // keep reading until end of input
                    }
                } catch (IOException ignored) {
                    // the parent is gone either way
                }
                System.exit(0);
            });
        }
        NodeServer server = new NodeServer(serveConfig(options), null, security(options));
        server.start();
        err.println("inference-node: serving on http://" + server.address().getHostString() + ":"
                + server.address().getPort() + " (health is 503 until the model is loaded)");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return OK;
    }

    private static int proxy(Map<String, String> options, PrintStream err) throws IOException {
        io.macfleet.node.server.AuthenticatingProxy proxy = new io.macfleet.node.server.AuthenticatingProxy(
                io.macfleet.node.server.AuthenticatingProxy.listenAddress(required(options, "listen")),
                io.macfleet.node.server.AuthenticatingProxy.upstreamUri(required(options, "to")),
                io.macfleet.node.server.NodeSecurity.of(required(options, "api-key"), null));
        proxy.start();
        err.println("inference-node: proxy on http://" + proxy.address().getHostString() + ":" + proxy.address().getPort()
                + " to http://" + options.get("to") + " (Authorization: Bearer required)");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            proxy.close();
            stopped.countDown();
        }));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return OK;
    }

    private static int generate(Map<String, String> options, PrintStream out, PrintStream err) throws IOException {
        Path model = Path.of(required(options, "model"));
        String prompt = required(options, "prompt");
        SamplingParameters parameters = new SamplingParameters((float) decimal(options, "temperature", 0),
                (int) number(options, "top-k", 0), (float) decimal(options, "top-p", 1), (float) decimal(options, "min-p", 0),
                options.containsKey("seed") ? number(options, "seed", 0) : null, (int) number(options, "max-tokens", 64),
                List.of());
        try (InferenceEngine engine = InferenceEngine.load(model, (int) number(options, "context", 0),
                (int) number(options, "threads", 0))) {
            List<Integer> tokens = options.containsKey("chat")
                    ? engine.encodeChat(List.of(new ChatTemplate.Message("user", prompt)))
                    : engine.encodeCompletion(prompt);
            InferenceEngine.Generation result = engine.generate(tokens, parameters, text -> {
                out.print(text);
                out.flush();
            });
            out.println();
            err.printf("%d prompt tokens, %d generated (%s); time to first token %.3f s; decode %.2f tokens/s%n",
                    result.promptTokens(), result.completionTokens(), result.finishReason(),
                    result.timeToFirstTokenNanos() / 1e9, result.decodeTokensPerSecond());
        }
        return OK;
    }

    private static int bench(Map<String, String> options, PrintStream out) throws IOException {
        Benchmark.run(Path.of(required(options, "model")), (int) number(options, "prompt-tokens", 512),
                (int) number(options, "decode-tokens", 32), (int) number(options, "threads", 0),
                number(options, "bandwidth-mb", 0) << 20, out);
        return OK;
    }

    /**
     * Loads the model as serve does (its SHA-256 against --model-sha256 first, then the GGUF header, the tensors and
     * the tokenizer) with a small context, and exits. A deploy runs it on one Mac with the staged files before it
     * switches the running cluster, so a file that does not load never replaces one that serves.
     */
    private static int verifyModel(Map<String, String> options, PrintStream out, PrintStream err) throws IOException {
        Path model = Path.of(required(options, "model"));
        io.macfleet.node.server.NodeSecurity security = io.macfleet.node.server.NodeSecurity.of(null, options.get("model-sha256"));
        long start = System.nanoTime();
        try {
            security.checkModel(model);
            try (InferenceEngine engine = InferenceEngine.load(model, (int) number(options, "context", 64), 1)) {
                int tokens = engine.encodeCompletion("Hello").size();
                out.printf("model %s loads (%d tokens for \"Hello\"; %.1f s)%n", model, tokens, (System.nanoTime() - start) / 1e9);
            }
            return OK;
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            err.println("inference-node: model " + model + " does not load: " + io.macfleet.node.server.NodeSecurity.loadFailure(model, e));
            return FAILED;
        }
    }

    private static int makeModel(Map<String, String> options, PrintStream out) throws IOException {
        ModelGenerator.Shape shape = ModelGenerator.preset(required(options, "preset"));
        Path target = Path.of(required(options, "out"));
        long start = System.nanoTime();
        ModelGenerator.Architecture architecture = ModelGenerator.Architecture.parse(options.getOrDefault("arch", "llama"));
        String routing = options.getOrDefault("routing", "sigmoid");
        if (!routing.equals("sigmoid") && !routing.equals("softmax")) {
            throw new IllegalArgumentException("--routing " + routing + ": sigmoid (DeepSeek V3) or softmax (V2)");
        }
        if (architecture == ModelGenerator.Architecture.DEEPSEEK2 && routing.equals("softmax")) {
            architecture = ModelGenerator.Architecture.DEEPSEEK2_SOFTMAX;
        }
        ModelGenerator.write(shape, architecture,
                io.macfleet.node.generator.QuantizationMix.parse(options.getOrDefault("type", "q8_0")), number(options, "seed", 42), target);
        out.printf("wrote %s (%s, %d MB) in %.1f s%n", target, shape.name(), java.nio.file.Files.size(target) >> 20,
                (System.nanoTime() - start) / 1e9);
        return OK;
    }
}
