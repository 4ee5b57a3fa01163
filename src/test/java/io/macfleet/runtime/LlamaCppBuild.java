package io.macfleet.runtime;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The llama.cpp build the tests run (llama-server, ggml-rpc-server and their libraries): the directory in
 * MACFLEET_LLAMA_CPP_BIN (.ci/run sets it from .ci/llama-cpp.sh), else the cache .ci/llama-cpp.sh fills
 * (${MACFLEET_CACHE:-~/.cache/macfleet}/llama.cpp/, found through its index file). Without it the test is skipped
 * saying how to build it, and fails when CI=true.
 */
public final class LlamaCppBuild {

    private LlamaCppBuild() {
    }

    public static Optional<Path> find() {
        return LlamaCppBuilds.cached();
    }

    /** The build directory, or the test is skipped (failed when CI=true). */
    public static Path required() {
        Optional<Path> bin = find();
        if (bin.isEmpty()) {
            String reason = "llama.cpp is not built: run .ci/llama-cpp.sh (about 15 CPU-minutes, cached) or set MACFLEET_LLAMA_CPP_BIN to a"
                    + " directory with llama-server and ggml-rpc-server";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason + "; CI=true requires it");
            }
            Assumptions.abort(reason + "; skipping the llama.cpp test");
        }
        return bin.get();
    }
}
