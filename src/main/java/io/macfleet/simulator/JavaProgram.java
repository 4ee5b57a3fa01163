package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;

/**
 * java -version: what Temurin 25 prints (on standard error, as every JDK does; captured from Temurin 25.0.3, see
 * SOURCES.md); without a JDK, macOS's /usr/bin/java stub answers that no Java runtime is installed.
 */
final class JavaProgram implements SimulatedProgram {

    static final String TEMURIN_25 = """
            openjdk version "25.0.3" 2026-04-21 LTS
            OpenJDK Runtime Environment Temurin-25.0.3+9 (build 25.0.3+9-LTS)
            OpenJDK 64-Bit Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS, mixed mode, sharing)
            """;
    static final String NO_RUNTIME = "The operation couldn\u2019t be completed. Unable to locate a Java Runtime.\n"
            + "Please visit http://www.java.com for information on installing Java.\n\n";

    @Override
    public List<String> names() {
        return List.of("java");
    }

    @Override
    public Result run(Call call) {
        if (!call.mac().hasJava()) {
            return Result.fail(1, NO_RUNTIME);
        }
        if (call.arguments().equals(List.of("-version")) || call.arguments().equals(List.of("--version"))) {
            return new Result("", TEMURIN_25, 0, null);
        }
        return Result.fail(1, "java: the simulator answers java -version only\n");
    }
}
