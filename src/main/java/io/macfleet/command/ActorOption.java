package io.macfleet.command;

import picocli.CommandLine.Option;

/** {@code --actor NAME} of the commands that change state; use with {@code @Mixin ActorOption actor;}. */
public class ActorOption {

    @Option(names = "--actor", paramLabel = "NAME", description = "Who acts, for the audit log (default: cli: and the OS user, e.g. cli:alice).")
    String actor;

    /** The actor for the audit log: the name given, else {@link Actors#commandLine()}. */
    public String name() {
        return Actors.resolve(actor);
    }

    /** " (os user alice)" when the name given is not the OS user, for the audit detail; else empty. */
    public String osUserNote() {
        return Actors.osUserNote(actor);
    }
}
