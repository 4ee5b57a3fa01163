package io.macfleet.simulator.mdm;

import io.macfleet.simulator.MacosRelease;
import java.time.Instant;

/**
 * The Mac under a simulated MDM client: what the client reads (version, power, boot time, bootstrap token) and the
 * one thing it does to the Mac (install a release and restart into it). {@link SimulatedMacHost} ties it to a
 * simulated Mac with its SSH server; {@link StandaloneHost} is a Mac without SSH for fast state-machine tests.
 */
public interface DeviceHost {
    String modelIdentifier();

    MacosRelease release();

    boolean poweredOn();

    /** When the Mac last started; an enforcement missed while off runs a scaled hour after this. */
    Instant bootTime();

    boolean bootstrapTokenEscrowed();

    /** Installs {@code release} and restarts; the Mac comes back running it (or whatever a fault makes it run). */
    void installAndRestart(MacosRelease release);

    /** RestartDevice. */
    void restart();
}
