package io.macfleet.models.placement;

import java.util.List;

/**
 * A placement's answer as {@code macfleet model place --json} prints it (and the REST API would send it):
 * {@code bytesFromControlHost} is what this host sent, against {@code totalBytes} of model.
 */
public record PlacementBody(String cluster, String model, boolean succeeded, List<List<String>> chains, List<MachineBody> machines,
                            long totalBytes, long bytesFromControlHost, double wallSeconds, int rounds) {

    /** One Mac: {@code placed}, {@code already-present} or {@code failed}, with the bytes it wrote and received again. */
    public record MachineBody(String machine, String outcome, long bytesWritten, long bytesResent, String message) {
    }

    public static PlacementBody of(String model, PlacementReport report) {
        return new PlacementBody(report.cluster(), model, report.succeeded(), report.chains(),
                report.machines().stream().map(outcome -> new MachineBody(outcome.machine(),
                        outcome.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), outcome.bytesWritten(), outcome.bytesResent(),
                        outcome.message())).toList(),
                report.totalBytes(), report.bytesFromControlHost(), report.wallMillis() / 1000.0, report.rounds());
    }
}
