package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A program that was copied onto a simulated Mac and is run by its absolute path (say
 * {@code /usr/local/macfleet/llama.cpp/HASH/llama-server --version}): it runs as a real process of this host, as the
 * simulated launchd runs such a program as a daemon, with arguments that name files of the Mac's file system pointed
 * into it. Only executable regular files of the simulated file system run (a Mac's chmod sets the bit), for at most
 * {@value #TIMEOUT_SECONDS} s.
 */
final class UploadedProgram {

    static final int TIMEOUT_SECONDS = 60;

    private UploadedProgram() {
    }

    /** The result of running it, or empty when the path names no executable file of this Mac. */
    static Optional<Result> run(SimulatedMac mac, List<String> words) {
        String program = words.getFirst();
        if (!program.startsWith("/")) {
            return Optional.empty();
        }
        Path file;
        try {
            file = mac.resolve(program);
        } catch (IllegalArgumentException outside) {
            return Optional.empty();
        }
        if (!Files.isRegularFile(file) || !Files.isExecutable(file)) {
            return Optional.empty();
        }
        List<String> command = new ArrayList<>();
        command.add(mac.faults().programRunFor(file).toString());
        for (String argument : words.subList(1, words.size())) {
            Path mapped = argument.startsWith("/") && !argument.equals("/") ? mac.resolve(argument) : null;
            command.add(mapped != null && Files.exists(mapped) ? mapped.toString() : argument);
        }
        try {
            Path out = Files.createTempFile("simulated-program", ".out");
            Path err = Files.createTempFile("simulated-program", ".err");
            try {
                ProcessBuilder builder = new ProcessBuilder(command).directory(mac.root().toFile())
                        .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
                Launchd.libraryPathNextTo(builder, file.toString());
                Process process = builder.start();
                if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    return Optional.of(Result.fail(124, program + ": did not end within " + TIMEOUT_SECONDS + " s\n"));
                }
                return Optional.of(new Result(Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8),
                        process.exitValue(), null));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            return Optional.of(Result.fail(126, "zsh: exec format error: " + program + "\n"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of(Result.fail(130, ""));
        }
    }
}
