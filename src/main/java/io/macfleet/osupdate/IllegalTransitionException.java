package io.macfleet.osupdate;

/** A transition the state table does not declare: a bug in the engine or a row changed behind its back. */
public final class IllegalTransitionException extends IllegalStateException {
    private final String from;
    private final String to;

    IllegalTransitionException(String subject, Enum<?> from, Enum<?> to) {
        super("illegal " + subject + " transition " + from + " -> " + to);
        this.from = from.name();
        this.to = to.name();
    }

    public String from() {
        return from;
    }

    public String to() {
        return to;
    }
}
