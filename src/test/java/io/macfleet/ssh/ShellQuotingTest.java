package io.macfleet.ssh;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Command#render()} against real shells (issue 14, item 10): every argument must arrive as exactly the
 * literal word it was, in sh (dash), bash and zsh, the login shell on macOS, which expands a leading {@code =word}
 * to a path, {@code ~} to a home directory, and more.
 */
class ShellQuotingTest {

    static final List<String> WORDS = List.of("plain", "=ls", "=sh", "a=b", "=", "~", "~root", "~/x", "%1", "a b", "", "it's", "$HOME",
            "x;y", "*", "?", "[a]", "{a,b}", "a{1..3}", "!", "!!", "^x", "#comment", "-n", "--", "a\\b", "\"q\"", "`id`", "$(id)",
            "x\ny", "tab\there", "a|b", "a&b", "<in", ">out", "(x)", "é", "@", "a:b", "x,y", "%", "+x", "a=~b", "foo=bar=baz");

    @ParameterizedTest
    @ValueSource(strings = {"/bin/sh", "/bin/bash", "/bin/zsh", "/usr/bin/zsh"})
    void everyWordArrivesLiterally(String shell) throws IOException, InterruptedException {
        Assumptions.assumeTrue(Files.isExecutable(Path.of(shell)), shell + " is not installed (Debian: apt-get install zsh)");
        Command command = new Command("printf", prepend("%s\\0", WORDS), false, false);
        Process process = new ProcessBuilder(shell, "-c", command.render()).redirectErrorStream(false).start();
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
        String error = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(shell + ": " + error).isZero();
        List<String> received = new ArrayList<>(List.of(new String(output, StandardCharsets.UTF_8).split("\0", -1)));
        received.removeLast();
        assertThat(received).as(shell + " received " + received).containsExactlyElementsOf(WORDS);
    }

    private static List<String> prepend(String first, List<String> rest) {
        List<String> all = new ArrayList<>();
        all.add(first);
        all.addAll(rest);
        return all;
    }
}
