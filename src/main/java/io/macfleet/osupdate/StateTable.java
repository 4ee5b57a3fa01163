package io.macfleet.osupdate;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The allowed transitions between the states of one enum, declared once; {@link #check} refuses any other with an
 * {@link IllegalTransitionException} naming both states. Self-contained on purpose (no project types), so another
 * workflow can copy it rather than share a package with this one.
 */
final class StateTable<S extends Enum<S>> {
    private final String subject;
    private final Map<S, Set<S>> allowed;
    private final boolean repeatAllowed;

    private StateTable(String subject, Map<S, Set<S>> allowed, boolean repeatAllowed) {
        this.subject = subject;
        this.allowed = allowed;
        this.repeatAllowed = repeatAllowed;
    }

    static <S extends Enum<S>> Builder<S> of(Class<S> states, String subject) {
        return new Builder<>(states, subject);
    }

    /** What the table is about ("cluster step", ...), for messages. */
    String subject() {
        return subject;
    }

    boolean allows(S from, S to) {
        return (repeatAllowed && from == to) || allowed.get(from).contains(to);
    }

    /** The states {@code from} may move to (a repeat of {@code from} itself not included). */
    Set<S> targets(S from) {
        return allowed.get(from);
    }

    /** @throws IllegalTransitionException when the table does not allow {@code from} → {@code to} */
    S check(S from, S to) {
        if (!allows(from, to)) {
            throw new IllegalTransitionException(subject, from, to);
        }
        return to;
    }

    static final class Builder<S extends Enum<S>> {
        private final Class<S> states;
        private final String subject;
        private final Map<S, EnumSet<S>> allowed;
        private boolean repeatAllowed;

        private Builder(Class<S> states, String subject) {
            this.states = states;
            this.subject = subject;
            this.allowed = new EnumMap<>(states);
            for (S state : states.getEnumConstants()) {
                allowed.put(state, EnumSet.noneOf(states));
            }
        }

        @SafeVarargs
        final Builder<S> allow(S from, S... to) {
            Collections.addAll(allowed.get(from), to);
            return this;
        }

        /** Every state may move to {@code to} (e.g. a reset on resume). */
        Builder<S> fromAny(S to) {
            allowed.values().forEach(targets -> targets.add(to));
            return this;
        }

        /**
         * Writing the state a row already has is no transition and allowed: repeated observations of a phase, and a
         * step repeated after a crash between storing it and acting on it.
         */
        Builder<S> repeatAllowed() {
            this.repeatAllowed = true;
            return this;
        }

        StateTable<S> build() {
            Map<S, Set<S>> copy = new EnumMap<>(states);
            allowed.forEach((from, to) -> copy.put(from, Collections.unmodifiableSet(EnumSet.copyOf(to))));
            return new StateTable<>(subject, Collections.unmodifiableMap(copy), repeatAllowed);
        }
    }
}
