package io.macfleet.browser;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's Chromium, headless, driven from the command line: render a page to PNG or dump its DOM. CI
 * (.ci/run) installs the package; elsewhere a missing browser skips the test, except when CI=true, where it
 * fails, so that a browser test cannot silently stop running.
 */
public final class HeadlessChromium {
    private static final List<String> CANDIDATES = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome");

    private HeadlessChromium() {
    }

    public static Path executable() {
        Optional<Path> found = CANDIDATES.stream().map(Path::of).filter(Files::isExecutable).findFirst();
        if (found.isEmpty()) {
            String message = "no Chromium found at " + CANDIDATES + " (install Debian's chromium package; .ci/run does)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        return found.get();
    }

    /** Renders {@code page} (a file) at the given size and returns the PNG. */
    public static Path screenshot(Path page, int width, int height, Path png) throws IOException, InterruptedException {
        run(page, List.of("--screenshot=" + png.toAbsolutePath(), "--window-size=" + width + "," + height));
        assertThat(png).as("chromium wrote no screenshot").exists();
        return png;
    }

    /** The DOM Chromium built from {@code page}, serialised. */
    public static String dumpDom(Path page) throws IOException, InterruptedException {
        return run(page, List.of("--dump-dom"));
    }

    private static String run(Path page, List<String> extra) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory("macfleet-chromium-");
        List<String> command = new ArrayList<>(List.of(executable().toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + profile));
        command.addAll(extra);
        command.add(page.toUri().toString());
        Path output = Files.createTempFile("macfleet-chromium-", ".out");
        Process process = new ProcessBuilder(command).redirectErrorStream(false)
                .redirectOutput(output.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("chromium did not finish within 60 s: " + command);
        }
        assertThat(process.exitValue()).as("chromium exit status for " + command).isZero();
        return Files.readString(output, StandardCharsets.UTF_8);
    }
}
