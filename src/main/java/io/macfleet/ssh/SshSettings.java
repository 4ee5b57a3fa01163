package io.macfleet.ssh;

import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Settings of the SSH transport for one process or command invocation.
 *
 * @param acceptNewHostKeys record the host key of a machine seen for the first time (trust on first use;
 *                          {@code --accept-new-host-keys}); when false such a machine is refused
 * @param limits default connect timeout, command timeout and output cap of every command
 * @param parallelism how many machines a fleet run works on at the same time ({@code --parallel N})
 * @param actor who acts, for the audit log ("cli:alice", "service")
 * @param sudoAllowList absolute paths of the programs that may run under {@code sudo -n}
 * @param environment where {@code env:} secret references are resolved, and where SSH_AUTH_SOCK is looked up
 */
public record SshSettings(boolean acceptNewHostKeys, ExecutionLimits limits, int parallelism, String actor,
                          Set<String> sudoAllowList, Map<String, String> environment) {

    public static final int DEFAULT_PARALLELISM = 32;

    public SshSettings {
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(actor, "actor");
        sudoAllowList = Set.copyOf(sudoAllowList);
        environment = Map.copyOf(environment);
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be at least 1, was " + parallelism);
        }
    }

    /** Unknown host keys refused, default limits, 32 machines at a time, the built-in sudo allow-list. */
    public static SshSettings defaults(String actor) {
        return new SshSettings(false, ExecutionLimits.DEFAULTS, DEFAULT_PARALLELISM, actor,
                PrivilegedProgram.paths(), System.getenv());
    }

    public SshSettings withAcceptNewHostKeys(boolean accept) {
        return new SshSettings(accept, limits, parallelism, actor, sudoAllowList, environment);
    }

    public SshSettings withLimits(ExecutionLimits newLimits) {
        return new SshSettings(acceptNewHostKeys, newLimits, parallelism, actor, sudoAllowList, environment);
    }

    public SshSettings withParallelism(int newParallelism) {
        return new SshSettings(acceptNewHostKeys, limits, newParallelism, actor, sudoAllowList, environment);
    }

    public SshSettings withEnvironment(Map<String, String> newEnvironment) {
        return new SshSettings(acceptNewHostKeys, limits, parallelism, actor, sudoAllowList, newEnvironment);
    }

    @Override
    public String toString() {
        // The environment can hold secrets (env: references point into it): never print it.
        return "SshSettings[acceptNewHostKeys=" + acceptNewHostKeys + ", limits=" + limits + ", parallelism="
                + parallelism + ", actor=" + actor + ", sudoAllowList=" + sudoAllowList + "]";
    }
}
