package io.macfleet.deployment;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The node's jar the reactor built before the control plane's tests (inference-node is the first module), tiny models made with it, and free ports for the ranks. */
public final class NodeJars {
    private NodeJars() {
    }

    public static Path nodeJar() throws IOException {
        for (Path directory : List.of(Path.of("inference-node/target"), Path.of("../inference-node/target"))) {
            if (Files.isDirectory(directory)) {
                try (var files = Files.list(directory)) {
                    var jar = files.filter(file -> file.getFileName().toString().matches("inference-node-[^-]+(-SNAPSHOT)?\\.jar")).findFirst();
                    if (jar.isPresent()) {
                        return jar.get().toAbsolutePath();
                    }
                }
            }
        }
        throw new IllegalStateException("the inference node's jar is not built: ./mvnw -B -pl inference-node package -DskipTests");
    }

    /** The tiny preset in F32 (4 query heads, 2 KV heads): tensor parallelism across 4 ranks replicates the KV heads. */
    public static Path tinyModel(Path directory, long seed) throws Exception {
        Path model = directory.resolve("tiny-" + seed + ".gguf");
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", nodeJar().toString(),
                "make-model", "--preset", "tiny", "--type", "f32", "--seed", Long.toString(seed), "--out", model.toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("make-model failed: " + output);
        }
        return model;
    }

    /** A port p with p..p+count-1 free now (the ranks on loopback take port + 2 rank and the next one). */
    public static int freePortRange(int count) throws Exception {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base;
            try (ServerSocket socket = new ServerSocket(0)) {
                base = socket.getLocalPort();
            }
            if (base + count > 65535) {
                continue;
            }
            boolean free = true;
            for (int p = base; p < base + count && free; p++) {
                try (ServerSocket probe = new ServerSocket(p)) {
                    probe.setReuseAddress(true);
                } catch (java.io.IOException e) {
                    free = false;
                }
            }
            if (free) {
                return base;
            }
        }
        throw new IllegalStateException("no free port range");
    }
}
