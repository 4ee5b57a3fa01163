package io.macfleet.simulator.mdm;

/**
 * Faults of a simulated Mac's update. A missing bootstrap token is not here: it is the Mac's own state
 * ({@link DeviceHost#bootstrapTokenEscrowed()}), as on a real Mac. A Mac off at the deadline is the host powered off.
 */
public final class DeviceFaults {
    /** The download stops for lack of free space. */
    public volatile boolean notEnoughDisk;
    /** The download fails (network, Apple's CDN). */
    public volatile boolean downloadFails;
    /** After the install restart the Mac runs a different build than the target (e.g. a supplemental "a" build). */
    public volatile boolean wrongBuildAfterRestart;

    public void clear() {
        notEnoughDisk = false;
        downloadFails = false;
        wrongBuildAfterRestart = false;
    }
}
