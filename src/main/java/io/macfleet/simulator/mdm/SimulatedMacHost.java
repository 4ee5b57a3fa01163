package io.macfleet.simulator.mdm;

import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.PowerState;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import java.time.Instant;

/**
 * A simulated Mac of a {@link SimulatedFleet} under MDM: the version the MDM client reports is the one {@code sw_vers}
 * prints over SSH, an install stages the release and restarts the Mac through the fleet (SSH goes away for the
 * fleet's reboot duration), and the bootstrap token is the one {@code profiles status -type bootstraptoken} shows.
 */
public final class SimulatedMacHost implements DeviceHost {
    private final SimulatedFleet fleet;
    private final SimulatedMac mac;

    public SimulatedMacHost(SimulatedFleet fleet, SimulatedMac mac) {
        this.fleet = fleet;
        this.mac = mac;
    }

    @Override
    public String modelIdentifier() {
        return mac.spec().modelIdentifier();
    }

    @Override
    public MacosRelease release() {
        return mac.snapshot().release();
    }

    @Override
    public boolean poweredOn() {
        return mac.power() == PowerState.ON;
    }

    @Override
    public Instant bootTime() {
        return mac.snapshot().bootTime();
    }

    @Override
    public boolean bootstrapTokenEscrowed() {
        return mac.snapshot().bootstrapTokenEscrowed();
    }

    @Override
    public void installAndRestart(MacosRelease release) {
        mac.stageRelease(release);
        fleet.reboot(mac.name());
    }

    @Override
    public void restart() {
        fleet.reboot(mac.name());
    }
}
