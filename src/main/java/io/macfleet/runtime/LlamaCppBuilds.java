package io.macfleet.runtime;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where a llama.cpp build for this host is (the simulator's Macs run it): MACFLEET_LLAMA_CPP_BIN, else the cache that
 * {@code .ci/llama-cpp.sh} fills (${MACFLEET_CACHE:-~/.cache/macfleet}/llama.cpp/, found through its index files);
 * {@link #buildWithScript} runs that script when the cache is cold.
 */
public final class LlamaCppBuilds {

    public static final String SCRIPT = ".ci/llama-cpp.sh";

    private LlamaCppBuilds() {
    }

    public static Optional<Path> cached() {
        String configured = System.getenv("MACFLEET_LLAMA_CPP_BIN");
        if (configured != null && !configured.isBlank()) {
            return usable(Path.of(configured));
        }
        Path root = cacheRoot();
        try (var indexes = Files.list(root)) {
            for (Path index : indexes.filter(file -> file.getFileName().toString().endsWith(".commit")).sorted().toList()) {
                Optional<Path> bin = usable(root.resolve(Files.readString(index).strip()).resolve("bin"));
                if (bin.isPresent()) {
                    return bin;
                }
            }
        } catch (IOException | RuntimeException none) {
            // no cache yet
        }
        return Optional.empty();
    }

    static Path cacheRoot() {
        String cache = System.getenv("MACFLEET_CACHE");
        return (cache == null || cache.isBlank() ? Path.of(System.getProperty("user.home"), ".cache", "macfleet") : Path.of(cache)).resolve("llama.cpp");
    }

    private static Optional<Path> usable(Path bin) {
        return Files.isExecutable(bin.resolve("llama-server")) && Files.isExecutable(bin.resolve("ggml-rpc-server")) ? Optional.of(bin) : Optional.empty();
    }

    /** The cached build, or builds it with {@value #SCRIPT} (found next to this macfleet), saying so first. */
    public static Path buildWithScript(PrintWriter out) throws IOException {
        Optional<Path> cached = cached();
        if (cached.isPresent()) {
            return cached.get();
        }
        Path script = script().orElseThrow(() -> new IOException("no llama.cpp build in " + cacheRoot() + " and no " + SCRIPT
                + " to make one: run it from a macfleet checkout, or set MACFLEET_LLAMA_CPP_BIN to a directory with llama-server and ggml-rpc-server"));
        out.println("Building llama.cpp once with " + script + " (about 15 CPU-minutes; cached in " + cacheRoot() + ") ...");
        out.flush();
        Process process = new ProcessBuilder("bash", script.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String printed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        try {
            if (process.waitFor() != 0) {
                throw new IOException(SCRIPT + " failed (exit " + process.exitValue() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while building llama.cpp", e);
        }
        Path bin = Path.of(printed.lines().reduce((first, second) -> second).orElse(""));
        return usable(bin).orElseThrow(() -> new IOException(SCRIPT + " printed " + printed + ", which holds no llama-server and ggml-rpc-server"));
    }

    private static Optional<Path> script() {
        List<Path> roots = new ArrayList<>(List.of(Path.of("").toAbsolutePath()));
        try {
            Path code = Path.of(LlamaCppBuilds.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path parent = code; parent != null; parent = parent.getParent()) {
                roots.add(parent);
            }
        } catch (Exception unknown) {
            // the working directory is still tried
        }
        return roots.stream().map(root -> root.resolve(SCRIPT)).filter(Files::isRegularFile).findFirst();
    }
}
