package io.macfleet.osupdate;

/**
 * Called by the engine right after it stored a transition and before it acts on it: the points where a campaign can
 * be killed and resumed. Tests stop the engine abruptly here (an {@link Error} the engine does not catch); the
 * product's is a no-op.
 */
@FunctionalInterface
interface StepBoundary {
    StepBoundary NONE = (campaign, boundary) -> { };

    void reached(long campaign, String boundary);
}
