package io.macfleet.models.placement;

import java.util.List;

/**
 * What a placement did: the chain the bytes took (machine names, first fed by the control host), each Mac's outcome,
 * the files' total size, the bytes the control host sent (once per chain and round: about the model's size when one
 * chain reached every Mac), the wall time and the number of rounds (more than one after an interruption).
 */
public record PlacementReport(String cluster, List<List<String>> chains, List<MacOutcome> machines, long totalBytes,
                              long bytesFromControlHost, long wallMillis, int rounds) {

    public PlacementReport {
        chains = chains.stream().map(List::copyOf).toList();
        machines = List.copyOf(machines);
    }

    /** One Mac's outcome over every file of the model. */
    public record MacOutcome(String machine, Kind kind, long bytesWritten, long bytesResent, String message) {
    }

    public enum Kind {
        /** Received, verified (SHA-256) and renamed into place. */
        PLACED,
        /** Every file was there already with the right SHA-256: nothing sent to it. */
        ALREADY_PRESENT,
        /** Not placed; the message says why (with the numbers for a full disk). */
        FAILED
    }

    public boolean succeeded() {
        return machines.stream().noneMatch(outcome -> outcome.kind() == Kind.FAILED);
    }

    public MacOutcome machine(String name) {
        return machines.stream().filter(outcome -> outcome.machine().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no machine " + name + " in the placement of " + cluster));
    }
}
