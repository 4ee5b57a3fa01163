package io.macfleet.models.placement;

import io.macfleet.command.CommandFailure;

/**
 * A placement refused before any byte was sent: bad input (an unknown model or cluster, a local file that changed:
 * {@link #badInput}) or a cluster that cannot take it (too little disk space, a Mac that cannot be checked). The
 * message says what and where.
 */
public class PlacementRefused extends RuntimeException implements CommandFailure {
    private final Kind kind;

    public PlacementRefused(String message) {
        this(message, Kind.CHECK_FAILED);
    }

    private PlacementRefused(String message, Kind kind) {
        super(message);
        this.kind = kind;
    }

    /** Another placement of the cluster is running (REST 409). */
    public static PlacementRefused busy(String message) {
        PlacementRefused refused = new PlacementRefused(message, Kind.CHECK_FAILED);
        refused.busy = true;
        return refused;
    }

    private boolean busy;

    public boolean isBusy() {
        return busy;
    }

    public static PlacementRefused badInput(String message) {
        return new PlacementRefused(message, Kind.USAGE);
    }

    @Override
    public Kind failureKind() {
        return kind;
    }
}
