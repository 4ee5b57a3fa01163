package io.macfleet.osupdate;

import java.util.Objects;

/**
 * One preflight check that failed on one machine: which, what was seen, and what a person must do about it.
 *
 * @param problem what was seen, e.g. "no bootstrap token is escrowed with the MDM server"
 * @param fix what to do, e.g. "run the bootstrap-token playbook on studio-2, then plan again"
 */
public record PreflightFinding(String machine, Check check, String problem, String fix) {

    /** The checks a method may make; a method that finds something else uses {@link #OTHER}. */
    public enum Check {
        REACHABLE, ENROLLED, BOOTSTRAP_TOKEN, VOLUME_OWNER, FREE_DISK, TARGET_OFFERED, CURRENT_VERSION, OTHER
    }

    public PreflightFinding {
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(problem, "problem");
        Objects.requireNonNull(fix, "fix");
    }
}
