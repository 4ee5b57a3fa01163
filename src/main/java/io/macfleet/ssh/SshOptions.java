package io.macfleet.ssh;

import picocli.CommandLine.Option;

import java.time.Duration;

/**
 * The SSH options every command that reaches machines shares; use with {@code @Mixin SshOptions ssh;} and
 * {@link #settings(String)}.
 */
public class SshOptions {

    @Option(names = "--accept-new-host-keys",
            description = "Record the host key of machines contacted for the first time (trust on first use)."
                    + " Changed keys are refused regardless.")
    boolean acceptNewHostKeys;

    @Option(names = "--parallel", paramLabel = "N", defaultValue = "" + SshSettings.DEFAULT_PARALLELISM,
            description = "Machines worked on at the same time (default: ${DEFAULT-VALUE}).")
    int parallel;

    @Option(names = "--connect-timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "Time to connect and authenticate, per machine (default: ${DEFAULT-VALUE}).")
    int connectTimeoutSeconds;

    @Option(names = "--command-timeout", paramLabel = "SECONDS", defaultValue = "60",
            description = "Time for one command, per machine (default: ${DEFAULT-VALUE}).")
    int commandTimeoutSeconds;

    /** The settings these options describe; an IllegalArgumentException names a bad value. */
    public SshSettings settings(String actor) {
        if (parallel < 1) {
            throw new IllegalArgumentException("--parallel must be at least 1, was " + parallel);
        }
        if (connectTimeoutSeconds < 1 || commandTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--connect-timeout and --command-timeout must be at least 1 second");
        }
        return SshSettings.defaults(actor)
                .withAcceptNewHostKeys(acceptNewHostKeys)
                .withParallelism(parallel)
                .withLimits(ExecutionLimits.DEFAULTS
                        .withConnectTimeout(Duration.ofSeconds(connectTimeoutSeconds))
                        .withCommandTimeout(Duration.ofSeconds(commandTimeoutSeconds)));
    }
}
