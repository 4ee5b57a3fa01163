package io.macfleet.models;

import io.macfleet.command.CommandFailure;

/** A model source, name or file the catalogue refuses; the message names what and where. */
public class ModelRefused extends RuntimeException implements CommandFailure {

    public enum Reason { INVALID, NOT_FOUND, CONFLICT, DOES_NOT_FIT, DOWNLOAD_FAILED }

    private final Reason reason;

    public ModelRefused(String message) {
        this(Reason.INVALID, message);
    }

    public ModelRefused(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    @Override
    public Kind failureKind() {
        return reason == Reason.DOES_NOT_FIT || reason == Reason.DOWNLOAD_FAILED ? Kind.CHECK_FAILED : Kind.USAGE;
    }
}
