package io.macfleet.node.server;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The official OpenAI Node client (npm "openai") against the node: src/test/resources/clients/openai-client.mjs.
 * npm installs the client once into OPENAI_NPM_DIR (default a directory under java.io.tmpdir, reused). Without
 * npm or the registry the test is skipped, except under CI=true, where it fails.
 */
class OpenAiNodeClientTest {
    static final String CLIENT = "openai@7.55.0";
    private static NodeServer server;

    @BeforeAll
    static void start() throws Exception {
        server = new NodeServer(new NodeConfig(TestModels.tiny(GgmlType.Q8_0), "127.0.0.1", 0, 2048, 1, 0, "tiny", 64));
        server.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!server.loaded()) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            assertThat(server.loadError()).isNull();
            Thread.sleep(50);
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The directory holding node_modules/openai, or a skip (a failure under CI) saying why there is none. */
    static Path installed(String spec, String directoryName) throws Exception {
        String configured = System.getenv("OPENAI_NPM_DIR");
        Path directory = configured != null ? Path.of(configured)
                : Path.of(System.getProperty("java.io.tmpdir"), directoryName);
        String name = spec.substring(0, spec.lastIndexOf('@'));
        if (Files.exists(directory.resolve("node_modules").resolve(name).resolve("package.json"))) {
            return directory;
        }
        Files.createDirectories(directory);
        String problem = run(directory, List.of("npm", "init", "-y"));
        if (problem == null) {
            problem = run(directory, List.of("npm", "install", "--no-audit", "--no-fund", spec));
        }
        if (problem != null) {
            unavailable("cannot install " + spec + " with npm: " + problem);
        }
        return directory;
    }

    static void unavailable(String why) {
        if ("true".equals(System.getenv("CI"))) {
            fail(why);
        }
        assumeTrue(false, why);
    }

    /** Runs a command; null when it succeeds, else what went wrong (its output's tail). */
    static String run(Path directory, List<String> command) throws InterruptedException {
        try {
            Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                return "timed out";
            }
            String text = new String(output, StandardCharsets.UTF_8);
            return process.exitValue() == 0 ? null : "exit " + process.exitValue() + ": "
                    + text.substring(Math.max(0, text.length() - 2000));
        } catch (IOException e) {
            return e.getMessage();
        }
    }

    @Test
    void theOfficialClientAcceptsEveryAnswer() throws Exception {
        Path directory = installed(CLIENT, "macfleet-openai-npm");
        Path script = directory.resolve("openai-client.mjs");
        try (InputStream in = OpenAiNodeClientTest.class.getResourceAsStream("/clients/openai-client.mjs")) {
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        String problem = run(directory, List.of("node", script.toString(),
                "http://127.0.0.1:" + server.address().getPort(), "tiny"));
        assertThat(problem).as("the openai client's checks").isNull();
    }
}
