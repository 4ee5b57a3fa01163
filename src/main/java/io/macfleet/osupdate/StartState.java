package io.macfleet.osupdate;

/**
 * Whether the update method's start was sent to a machine ({@code os_update_machine.start_state}): SENDING is
 * stored before the method is called, so a process killed in between sends again (the method's start is idempotent).
 */
enum StartState {
    NOT_SENT("not-sent"), SENDING("sending"), SENT("sent");

    private final String wire;

    StartState(String wire) {
        this.wire = wire;
    }

    String wire() {
        return wire;
    }

    static StartState of(String wire) {
        for (StartState state : values()) {
            if (state.wire.equals(wire)) {
                return state;
            }
        }
        throw new IllegalArgumentException("unknown start state '" + wire + "'");
    }
}
