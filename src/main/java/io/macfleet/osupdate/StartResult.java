package io.macfleet.osupdate;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link UpdateMethod#start} did on one machine: every action in order, and a failure when the method could not
 * start the update (the campaign then marks the machine failed with that text).
 */
public record StartResult(String machine, List<Action> actions, Optional<String> failure) {

    public StartResult {
        Objects.requireNonNull(machine, "machine");
        actions = List.copyOf(actions);
        Objects.requireNonNull(failure, "failure");
    }

    public static StartResult started(String machine, List<Action> actions) {
        return new StartResult(machine, actions, Optional.empty());
    }

    public static StartResult failed(String machine, List<Action> actions, String failure) {
        return new StartResult(machine, actions, Optional.of(failure));
    }

    /**
     * One thing sent.
     *
     * @param kind what sort: {@code declaration}, {@code set-declaration}, {@code enrollment-set}, {@code command},
     *             {@code remote-program}
     * @param subject what exactly: a declaration identifier, {@code set <- declaration}, an enrollment id and set, a
     *                program's argv without any secret
     * @param changed false when the server or machine already had it (e.g. KMFDDM's 304): nothing reached the device
     */
    public record Action(String kind, String subject, boolean changed) {
        public Action {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(subject, "subject");
        }
    }
}
