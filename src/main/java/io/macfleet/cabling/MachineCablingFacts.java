package io.macfleet.cabling;

import io.macfleet.facts.HardwarePorts;
import io.macfleet.facts.ThunderboltFacts;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the cabling check needs to know about one machine, from live facts or from captured command output.
 *
 * @param machine the machine's inventory name
 * @param managementAddress the address macfleet and the coordinator use (Ethernet), if known
 * @param thunderbolt {@code system_profiler SPThunderboltDataType -json}
 * @param hardwarePorts {@code networksetup -listallhardwareports}
 * @param rdmaEnabled {@code rdma_ctl status}, if captured
 * @param rdmaDevices {@code ibv_devices}, if captured
 * @param macosVersion {@code sw_vers -productVersion}, if captured
 * @param bridgeActive whether the Thunderbolt Bridge ({@code bridge0}) is up, if captured
 * @param rdmaPortStates {@code ibv_devinfo}: each RDMA device's port state (rdma_en3 to PORT_ACTIVE), if captured
 */
public record MachineCablingFacts(String machine, Optional<String> managementAddress, ThunderboltFacts thunderbolt,
                                  HardwarePorts hardwarePorts, Optional<Boolean> rdmaEnabled,
                                  Optional<List<String>> rdmaDevices, Optional<String> macosVersion,
                                  Optional<Boolean> bridgeActive, Optional<Map<String, String>> rdmaPortStates) {

    /** Without RDMA port states (captures and observations that predate {@code ibv_devinfo}). */
    public MachineCablingFacts(String machine, Optional<String> managementAddress, ThunderboltFacts thunderbolt,
                               HardwarePorts hardwarePorts, Optional<Boolean> rdmaEnabled, Optional<List<String>> rdmaDevices,
                               Optional<String> macosVersion, Optional<Boolean> bridgeActive) {
        this(machine, managementAddress, thunderbolt, hardwarePorts, rdmaEnabled, rdmaDevices, macosVersion, bridgeActive, Optional.empty());
    }

    public MachineCablingFacts {
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(thunderbolt, "thunderbolt");
        Objects.requireNonNull(hardwarePorts, "hardwarePorts");
        rdmaDevices = rdmaDevices.map(List::copyOf);
        rdmaPortStates = rdmaPortStates.map(Map::copyOf);
    }

    /** The network interface behind a Thunderbolt port, e.g. en4 for port 3 on a Mac Studio. */
    public Optional<String> interfaceOf(int port) {
        return hardwarePorts.thunderboltInterface(port);
    }

    /**
     * Whether the port can carry RDMA. On a Mac Studio with Thunderbolt 5 the port next to the Ethernet
     * port (the one whose interface is en2) cannot; source: exo-explore/exo pull request 1543 ("Mac Studio
     * RDMA incompatible port warning": "the TB5 port next to ethernet (en2) on Mac Studio which does not
     * support RDMA").
     */
    public boolean portCarriesRdma(int port) {
        boolean macStudio = thunderbolt.busForReceptacle(port).map(bus -> bus.hostName().equals("Mac Studio")).orElse(false);
        return !(macStudio && interfaceOf(port).filter("en2"::equals).isPresent());
    }

    /** The port state of the RDMA device behind a Thunderbolt port (e.g. PORT_DOWN), when ibv_devinfo was captured. */
    public Optional<String> rdmaPortState(int port) {
        return rdmaPortStates.flatMap(states -> interfaceOf(port).map(networkInterface -> states.get("rdma_" + networkInterface)));
    }
}
