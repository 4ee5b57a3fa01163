package io.macfleet.runtime;

import io.macfleet.deployment.DaemonAccount;
import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.runtime.RuntimePlan.DaemonPlan;
import io.macfleet.runtime.RuntimePlan.Listen;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.Probe;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * llama.cpp over its RPC backend: {@code llama-server} on the head Mac (the coordinator) with {@code --rpc} listing
 * every other Mac's {@code ggml-rpc-server} at that Mac's Thunderbolt address toward the head. llama.cpp negotiates
 * RDMA on such a connection by itself (tools/rpc/README.md, "RDMA transport": "with Thunderbolt, use the peer's
 * Thunderbolt address in --rpc; a connection made over another interface stays on TCP"), so the address is what makes
 * RDMA happen. Each rpc-server is bound to that one address only: the README says never to expose it, and it has no
 * authentication of its own; a point-to-point Thunderbolt link reaches only the head.
 */
public final class LlamaCppRuntime implements InferenceRuntime {

    public static final String NAME = "llama.cpp";
    public static final String SERVER_LABEL = "io.macfleet.llama-server";
    public static final String RPC_LABEL = "io.macfleet.ggml-rpc-server";
    public static final String HOME = "/usr/local/macfleet/llama.cpp";
    public static final String MODEL_DIRECTORY = "/usr/local/macfleet/models";
    public static final String CACHE_DIRECTORY = HOME + "/rpc-cache";
    public static final int DEFAULT_RPC_PORT = 50052;
    /** All layers on the devices: llama.cpp caps the number at the model's. */
    static final String ALL_LAYERS = "99";
    /**
     * Share of a Mac's memory the GPU may use: macOS wires at most about three quarters of unified memory for Metal on
     * these machines by default (iogpu.wired_limit_mb raises it); the KV cache and the OS need the rest.
     */
    static final double USABLE_MEMORY_SHARE = 0.75;

    /** "version: 0.5.0-dev (build 1, commit de3ff81)" (this source) or "version: 6640 (abc1234)" (releases of 2025). */
    private static final Pattern VERSION = Pattern.compile("version: (\\S+) \\(build (\\d+), commit ([0-9a-f]+)\\)");
    private static final Pattern OLD_VERSION = Pattern.compile("version: (\\d+) \\(([0-9a-f]+)\\)");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "llama.cpp: llama-server on the head Mac, ggml-rpc-server on every other Mac over Thunderbolt (RDMA when both ends can)";
    }

    @Override
    public List<String> labels() {
        return List.of(SERVER_LABEL, RPC_LABEL);
    }

    /** The rpc-servers first: llama-server connects to every one of them when it starts and fails without them. */
    @Override
    public List<String> startOrder() {
        return List.of(RPC_LABEL, SERVER_LABEL);
    }

    @Override
    public List<String> versionCommand(MachinePlan machine) {
        return List.of(buildDirectory(machine) + "/llama-server", "--version");
    }

    /** Both programs are copied to every Mac: the llama-server next to the daemon's program prints the build. */
    @Override
    public Optional<List<String>> versionCommand(LaunchDaemon installed) {
        String program = installed.programArguments().getFirst();
        if (!labels().contains(installed.label()) || program.lastIndexOf('/') <= 0) {
            return Optional.empty();
        }
        return Optional.of(List.of(program.substring(0, program.lastIndexOf('/')) + "/llama-server", "--version"));
    }

    @Override
    public Optional<String> build(String versionOutput) {
        Matcher matcher = VERSION.matcher(versionOutput);
        if (matcher.find()) {
            return Optional.of(matcher.group(1) + " build " + matcher.group(2) + " (" + matcher.group(3) + ")");
        }
        Matcher old = OLD_VERSION.matcher(versionOutput);
        return old.find() ? Optional.of(old.group(1) + " (" + old.group(2) + ")") : Optional.empty();
    }

    @Override
    public List<Pattern> rdmaFaultLines() {
        // ggml-rpc's RDMA transport (transport-apple.cpp) logs its failures with "RDMA" in the line.
        // "RDMA activate failed, staying on TCP" is the negotiated fallback to TCP (a link that works), not a fault.
        return List.of(Pattern.compile("(?i)^(?!.*staying on tcp).*rdma.*(fail|error)"), Pattern.compile("(?i)^(?!.*staying on tcp).*failed to .*rdma"));
    }

    /** llama-server's first log line, and the rpc-server's transport line (printed as it starts). */
    @Override
    public Optional<Pattern> startLine(String label) {
        return Optional.of(label.equals(SERVER_LABEL) ? Pattern.compile("llama_server: initializing") : Pattern.compile("transport\\s+:"));
    }

    @Override
    public Optional<Probe> probe(LaunchDaemon installed) {
        List<String> arguments = installed.programArguments();
        if (installed.label().equals(SERVER_LABEL)) {
            return Optional.of(new Probe.Http(URI.create("http://" + after(arguments, "--host").orElse("127.0.0.1") + ":"
                    + after(arguments, "--port").orElse("8080") + "/health")));
        }
        if (installed.label().equals(RPC_LABEL)) {
            return Optional.of(new Probe.Tcp(after(arguments, "-H").orElse("127.0.0.1"),
                    Integer.parseInt(after(arguments, "-p").orElse(Integer.toString(DEFAULT_RPC_PORT)))));
        }
        return Optional.empty();
    }

    /**
     * ggml-rpc-server prints "transport : TCP (RDMA auto-negotiate enabled)" (or "transport : TCP" when built without
     * RDMA) when it starts, and "RDMA activated" / "RDMA(Apple/UC) activated" once a client's connection switched to
     * RDMA; "RDMA activate failed, staying on TCP" when the negotiation failed (ggml-rpc.cpp, transport.cpp and
     * transport-apple.cpp of the node-llama-cpp 3.22.1 source). Without an activation the link stays on TCP.
     */
    @Override
    public Optional<String> transport(String label, String log) {
        if (!label.equals(RPC_LABEL)) {
            return Optional.empty();
        }
        int start = Math.max(log.lastIndexOf("transport      :"), log.lastIndexOf("transport :"));
        String current = start < 0 ? log : log.substring(start);
        if (current.contains("RDMA activated") || current.contains("RDMA(Apple/UC) activated")) {
            return Optional.of("rdma");
        }
        if (current.contains("RDMA activate failed")) {
            return Optional.of("tcp (fallback: RDMA activation failed)");
        }
        if (!current.contains("Accepted client connection")) {
            return Optional.of("no client yet");
        }
        return Optional.of(current.contains("RDMA auto-negotiate enabled") ? "tcp (fallback: the peer offered no RDMA)"
                : "tcp (fallback: built without RDMA)");
    }

    /** The rpc-server's {@code -c} cache: the one directory the daemons write (their account's; everything else is root's). */
    @Override
    public List<String> writableDirectories(MachinePlan machine) {
        return machine.directories().contains(CACHE_DIRECTORY) ? List.of(CACHE_DIRECTORY) : List.of();
    }

    private static Optional<String> after(List<String> arguments, String option) {
        int index = arguments.indexOf(option);
        return index >= 0 && index + 1 < arguments.size() ? Optional.of(arguments.get(index + 1)) : Optional.empty();
    }

    private static String buildDirectory(MachinePlan machine) {
        return machine.files().stream().map(StagedFile::destination).filter(path -> path.endsWith("/llama-server")).findFirst()
                .map(path -> path.substring(0, path.lastIndexOf('/'))).orElse(HOME);
    }

    /** The files of a build directory that are copied: the two programs and every shared library next to them. */
    static List<Path> buildFiles(Path build) {
        if (!Files.isDirectory(build)) {
            throw new RuntimeRefused("inference.settings.build: " + build + " is not a directory; expected llama.cpp's build/bin"
                    + " (or an unpacked release) holding llama-server and ggml-rpc-server");
        }
        for (String program : List.of("llama-server", "ggml-rpc-server")) {
            if (!Files.isRegularFile(build.resolve(program))) {
                throw new RuntimeRefused("inference.settings.build: " + build + " has no " + program + "; build it with"
                        + " cmake -DGGML_RPC=ON (targets llama-server ggml-rpc-server) or use a release that ships both");
            }
        }
        try (Stream<Path> files = Files.list(build)) {
            return files.filter(file -> {
                String name = file.getFileName().toString();
                return name.equals("llama-server") || name.equals("ggml-rpc-server") || name.endsWith(".dylib") || name.contains(".so")
                        || name.endsWith(".metal") || name.endsWith(".metallib");
            }).filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public RuntimePlan plan(RuntimeCluster cluster) {
        Map<String, Object> settings = cluster.settings();
        Path build = Path.of(cluster.setting("build", String.class).orElseThrow(() -> new RuntimeRefused(
                "cluster " + cluster.name() + ": inference.settings.build is missing; the llama.cpp runtime needs the directory of a"
                        + " llama.cpp build (llama-server, ggml-rpc-server and their libraries) on this host")));
        Path model = cluster.model().orElseThrow(() -> new RuntimeRefused("cluster " + cluster.name()
                + ": no model: give --model FILE.gguf or set inference.model"));
        int rpcPort = cluster.setting("rpcPort", Number.class).map(Number::intValue).orElse(DEFAULT_RPC_PORT);
        int httpPort = cluster.inference().port();
        List<Path> files = buildFiles(build);
        Map<Path, String> hashes = new LinkedHashMap<>();
        for (Path file : files) {
            try {
                hashes.put(file, NodeRelease.sha256(file));
            } catch (IOException e) {
                throw new RuntimeRefused("cannot read " + file + ": " + e.getMessage());
            }
        }
        String buildHash = hashOfFiles(hashes);
        String buildDirectory = HOME + "/" + buildHash.substring(0, 12);
        long modelSize;
        String modelSha256;
        try {
            modelSize = Files.size(model);
            modelSha256 = NodeRelease.sha256(model);
        } catch (IOException e) {
            throw new RuntimeRefused("cannot read the model " + model + ": " + e.getMessage());
        }
        checkMemory(cluster, model, modelSize);
        String modelPath = MODEL_DIRECTORY + "/" + modelSha256.substring(0, 12) + "-" + model.getFileName();
        RuntimeCluster.Machine head = cluster.head();
        List<String> peers = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (RuntimeCluster.Machine peer : cluster.machines().subList(1, cluster.machines().size())) {
            String address = peer.thunderboltAddresses().get(head.name());
            if (address == null) {
                missing.add(peer.name());
            } else {
                peers.add(address + ":" + rpcPort);
            }
        }
        if (!missing.isEmpty()) {
            throw new RuntimeRefused("no Thunderbolt address known toward the head " + head.name() + " on " + String.join(", ", missing)
                    + ": llama-server reaches each ggml-rpc-server at the peer's Thunderbolt address (RDMA needs it). Fix: cable each of "
                    + String.join(", ", missing) + " to " + head.name() + " (macfleet cabling plan " + cluster.name() + "), configure the"
                    + " point-to-point addresses (the thunderbolt-network step of the provision playbook), then gather facts (macfleet facts)"
                    + " so the cabling check sees both ends");
        }
        List<StagedFile> buildCopies = new ArrayList<>();
        for (Path file : files) {
            try {
                String name = file.getFileName().toString();
                boolean program = name.equals("llama-server") || name.equals("ggml-rpc-server");
                buildCopies.add(new StagedFile(buildDirectory + "/" + name, new StagedFile.Source.LocalFile(file),
                        Optional.of(hashes.get(file)), Files.size(file), program ? 0755 : 0644));
            } catch (IOException e) {
                throw new RuntimeRefused("cannot read " + file + ": " + e.getMessage());
            }
        }
        List<String> split = tensorSplit(cluster);
        Optional<String> apiKey = cluster.setting("apiKey", String.class);
        List<MachinePlan> machines = new ArrayList<>();
        for (RuntimeCluster.Machine machine : cluster.machines()) {
            Map<String, String> environment = new LinkedHashMap<>();
            environment.put("MACFLEET_CLUSTER", cluster.name());
            environment.put("MACFLEET_RUNTIME", NAME);
            environment.put("MACFLEET_BUILD_SHA256", buildHash);
            List<String> threads = cluster.setting("threads", Number.class).map(n -> List.of("-t", Integer.toString(n.intValue())))
                    .orElse(cluster.simulated() ? List.of("-t", "1") : List.of());
            if (machine.rank() == 0) {
                List<StagedFile> headFiles = new ArrayList<>(buildCopies);
                headFiles.add(new StagedFile(modelPath, new StagedFile.Source.LocalFile(model), Optional.of(modelSha256), modelSize, 0644));
                String keyFile = HOME + "/api-key";
                apiKey.ifPresent(reference -> headFiles.add(new StagedFile(keyFile, new StagedFile.Source.Secret(reference), Optional.empty(), -1, 0600)));
                environment.put("MACFLEET_MODEL_SHA256", modelSha256);
                List<String> arguments = new ArrayList<>(List.of(buildDirectory + "/llama-server", "-m", modelPath,
                        "--host", machine.managementAddress(), "--port", Integer.toString(httpPort), "-ngl", ALL_LAYERS, "--metrics"));
                if (!peers.isEmpty()) {
                    arguments.addAll(List.of("--rpc", String.join(",", peers), "--tensor-split", String.join(",", split)));
                }
                cluster.setting("context", Number.class).ifPresent(n -> arguments.addAll(List.of("-c", Integer.toString(n.intValue()))));
                cluster.setting("parallel", Number.class).ifPresent(n -> arguments.addAll(List.of("-np", Integer.toString(n.intValue()))));
                arguments.addAll(threads);
                if (apiKey.isPresent()) {
                    arguments.addAll(List.of("--api-key-file", keyFile));
                }
                LaunchDaemon daemon = LaunchDaemon.node(SERVER_LABEL, arguments, environment, HOME).runAs(DaemonAccount.NAME);
                URI health = URI.create("http://" + machine.managementAddress() + ":" + httpPort + "/health");
                machines.add(new MachinePlan(machine.name(), 0, "head: llama-server", machine.ssh(),
                        List.of(HOME, buildDirectory, MODEL_DIRECTORY), headFiles,
                        List.of(new DaemonPlan(daemon, 1, List.of(new Listen(machine.managementAddress(), httpPort)), new Probe.Http(health)))));
            } else {
                String bind = machine.thunderboltAddresses().get(head.name());
                List<String> arguments = new ArrayList<>(List.of(buildDirectory + "/ggml-rpc-server", "-H", bind, "-p", Integer.toString(rpcPort), "-c"));
                arguments.addAll(threads);
                environment.put("LLAMA_CACHE", CACHE_DIRECTORY);
                LaunchDaemon daemon = LaunchDaemon.node(RPC_LABEL, arguments, environment, HOME).runAs(DaemonAccount.NAME);
                machines.add(new MachinePlan(machine.name(), machine.rank(), "peer: ggml-rpc-server", machine.ssh(),
                        List.of(HOME, buildDirectory, CACHE_DIRECTORY), buildCopies,
                        List.of(new DaemonPlan(daemon, 0, List.of(new Listen(bind, rpcPort)), new Probe.Tcp(bind, rpcPort)))));
            }
        }
        String endpoint = "http://" + head.managementAddress() + ":" + httpPort + "/v1";
        List<String> notes = new ArrayList<>();
        notes.add("layers: -ngl " + ALL_LAYERS + " over the head and " + peers.size() + " ggml-rpc-server(s), --tensor-split "
                + String.join(":", split) + " (" + cluster.setting("tensorSplit", Object.class).map(Object::toString).orElse("memory") + ")");
        if (apiKey.isPresent()) {
            notes.add("API key: from " + apiKey.get() + " into " + HOME + "/api-key (mode 600), passed as --api-key-file");
        } else {
            notes.add("no API key: anyone who reaches " + endpoint + " may use it (set inference.settings.apiKey)");
        }
        return new RuntimePlan(NAME, cluster.name(), "sha256 " + buildHash.substring(0, 12) + " of " + files.size() + " files in " + build,
                machines, endpoint, new Probe.Http(URI.create("http://" + head.managementAddress() + ":" + httpPort + "/health")), notes);
    }

    /** One share per Mac in rank order: by memory (reduced by the greatest common divisor), even, or as given. */
    static List<String> tensorSplit(RuntimeCluster cluster) {
        Object setting = cluster.settings().getOrDefault("tensorSplit", "memory");
        int count = cluster.machines().size();
        if (setting instanceof List<?> list) {
            if (list.size() != count) {
                throw new RuntimeRefused("inference.settings.tensorSplit of " + cluster.name() + " has " + list.size() + " numbers for "
                        + count + " Macs; expected one per Mac in rank order (" + cluster.machines().stream().map(RuntimeCluster.Machine::name).toList() + ")");
            }
            return list.stream().map(value -> number((Number) value)).toList();
        }
        if ("even".equals(setting)) {
            return java.util.Collections.nCopies(count, "1");
        }
        List<Integer> memory = cluster.machines().stream().map(RuntimeCluster.Machine::memoryGb).toList();
        if (memory.stream().anyMatch(gb -> gb <= 0)) {
            return java.util.Collections.nCopies(count, "1");
        }
        int divisor = memory.stream().reduce(0, LlamaCppRuntime::gcd);
        return memory.stream().map(gb -> Integer.toString(gb / divisor)).toList();
    }

    private static String number(Number value) {
        double number = value.doubleValue();
        return number == Math.rint(number) ? Long.toString((long) number) : Double.toString(number);
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** A model that cannot fit in the memory the GPUs may use is refused here, with the numbers. */
    static void checkMemory(RuntimeCluster cluster, Path model, long modelSize) {
        if (cluster.machines().stream().anyMatch(machine -> machine.memoryGb() <= 0)) {
            return;
        }
        long totalGb = cluster.machines().stream().mapToLong(RuntimeCluster.Machine::memoryGb).sum();
        double usableBytes = totalGb * USABLE_MEMORY_SHARE * (1L << 30);
        if (modelSize > usableBytes) {
            throw new RuntimeRefused(String.format(Locale.ROOT,
                    "model %s is %.1f GB, more than the %.1f GB cluster %s can give it (%d Macs, %s GB of memory, %d GB in all, of which %.0f%%"
                            + " is usable by the GPUs): choose a smaller quantization or add Macs",
                    model.getFileName(), modelSize / (double) (1L << 30), usableBytes / (1L << 30), cluster.name(), cluster.machines().size(),
                    cluster.machines().stream().map(machine -> Integer.toString(machine.memoryGb())).toList(), totalGb, USABLE_MEMORY_SHARE * 100));
        }
    }

    /** One SHA-256 over the names and hashes of the build's files: the build's identity in paths and the environment. */
    static String hashOfFiles(Map<Path, String> hashes) {
        StringBuilder manifest = new StringBuilder();
        hashes.forEach((file, sha256) -> manifest.append(file.getFileName()).append(' ').append(sha256).append('\n'));
        return NodeRelease.sha256(manifest.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** llama-server serves /metrics when started with --metrics (the plan passes it), behind its API key. */
    @Override
    public Optional<String> metricsPath() {
        return Optional.of("/metrics");
    }

    /**
     * llama-server's names (llama.cpp tools/server, the metrics handler; a sample captured from build de3ff81 in
     * src/test/resources/runtime-metrics/): prompt and generated tokens and the deferred requests. It counts no
     * requests and measures no time to first token, so those stay empty.
     */
    @Override
    public InferenceCounters inferenceCounters(PrometheusText scraped) {
        return new InferenceCounters(java.util.Map.of(), scraped.value("llamacpp:prompt_tokens_total"),
                scraped.value("llamacpp:tokens_predicted_total"), null, scraped.value("llamacpp:requests_deferred"), java.util.Map.of());
    }
}
