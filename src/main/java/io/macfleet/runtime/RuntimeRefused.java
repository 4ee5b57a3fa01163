package io.macfleet.runtime;

/** A plan or deployment refused before anything changed: bad settings, skewed builds, missing cabling, too little memory. */
public final class RuntimeRefused extends RuntimeException implements io.macfleet.command.CommandFailure {
    public RuntimeRefused(String message) {
        super(message);
    }

    @Override
    public Kind failureKind() {
        return Kind.USAGE;
    }
}
