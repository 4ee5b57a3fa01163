package io.macfleet.provision;

/** A person's answer to an operator step: done (verify now), abort (fail the machine) or later (leave it waiting). */
public record OperatorAnswer(Kind kind, String actor) {

    public enum Kind { DONE, ABORT, DEFER }

    public static OperatorAnswer done(String actor) {
        return new OperatorAnswer(Kind.DONE, actor);
    }

    public static OperatorAnswer abort(String actor) {
        return new OperatorAnswer(Kind.ABORT, actor);
    }

    public static OperatorAnswer defer() {
        return new OperatorAnswer(Kind.DEFER, null);
    }
}
