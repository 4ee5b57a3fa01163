package io.macfleet.provision;

import java.util.Arrays;
import java.util.Locale;

/** Where one step stands on one machine in a run. */
public enum StepStatus {
    PENDING, RUNNING, WAITING_FOR_OPERATOR, DONE, SKIPPED_ALREADY_DONE, SKIPPED_NOT_APPLICABLE, FAILED;

    /** As stored and shown: {@code skipped-already-done}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static StepStatus fromLabel(String label) {
        return Arrays.stream(values()).filter(status -> status.label().equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown step status " + label));
    }

    /** The step needs nothing more on this machine. */
    public boolean complete() {
        return this == DONE || this == SKIPPED_ALREADY_DONE || this == SKIPPED_NOT_APPLICABLE;
    }
}
