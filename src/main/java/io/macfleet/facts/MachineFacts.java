package io.macfleet.facts;

import java.time.Instant;
import java.util.List;

/**
 * What one machine really is, as observed over SSH at one moment. Built when every command answered and every
 * essential output parsed; an optional fact whose output did not parse is named in {@code unreadableFacts} (its
 * fields then hold defaults that must not be shown as observed) and costs only that fact.
 *
 * @param memoryBytes from {@code sysctl hw.memsize}
 * @param performanceCores null when not reported; likewise efficiencyCores
 * @param thunderboltPorts every port with a receptacle number, in port order
 * @param thunderboltBridgeActive {@code bridge0} is up and active
 * @param uptimeSeconds time since boot, from {@code uptime}
 * @param freeDiskBytes free space of the root file system, from {@code df -k /}
 * @param unreadableFacts optional facts that could not be read this time (e.g. "bootstrap token"), each with the
 *                        reason naming its command; empty when every fact was read
 */
public record MachineFacts(String machine, Instant observedAt, String modelIdentifier, String modelName, String chip,
                           int cpuCores, Integer performanceCores, Integer efficiencyCores, int gpuCores, long memoryBytes,
                           String serialNumber, String hardwareUuid, String macosVersion, String macosBuild,
                           List<ThunderboltPort> thunderboltPorts, List<NetworkInterface> interfaces,
                           boolean thunderboltBridgeActive, boolean rdmaEnabled, List<String> rdmaDevices,
                           boolean bootstrapTokenSupportedOnServer, boolean bootstrapTokenEscrowed,
                           long uptimeSeconds, long freeDiskBytes, java.util.Map<String, String> unreadableFacts) {

    public MachineFacts {
        thunderboltPorts = List.copyOf(thunderboltPorts);
        interfaces = List.copyOf(interfaces);
        rdmaDevices = List.copyOf(rdmaDevices);
        // Observations stored before optional facts existed have no such field: every fact was read then.
        unreadableFacts = unreadableFacts == null ? java.util.Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(unreadableFacts));
    }

    /** Every fact read (the form used before optional facts could be unreadable). */
    public MachineFacts(String machine, Instant observedAt, String modelIdentifier, String modelName, String chip,
                        int cpuCores, Integer performanceCores, Integer efficiencyCores, int gpuCores, long memoryBytes,
                        String serialNumber, String hardwareUuid, String macosVersion, String macosBuild,
                        List<ThunderboltPort> thunderboltPorts, List<NetworkInterface> interfaces,
                        boolean thunderboltBridgeActive, boolean rdmaEnabled, List<String> rdmaDevices,
                        boolean bootstrapTokenSupportedOnServer, boolean bootstrapTokenEscrowed,
                        long uptimeSeconds, long freeDiskBytes) {
        this(machine, observedAt, modelIdentifier, modelName, chip, cpuCores, performanceCores, efficiencyCores, gpuCores, memoryBytes,
                serialNumber, hardwareUuid, macosVersion, macosBuild, thunderboltPorts, interfaces, thunderboltBridgeActive, rdmaEnabled,
                rdmaDevices, bootstrapTokenSupportedOnServer, bootstrapTokenEscrowed, uptimeSeconds, freeDiskBytes, java.util.Map.of());
    }

    /** Whether this optional fact (a name of {@link FactsGatherer#OPTIONAL_FACTS}) was read. */
    public boolean read(String fact) {
        return !unreadableFacts.containsKey(fact);
    }

    public long memoryGigabytes() {
        return memoryBytes >> 30;
    }

    /**
     * One Thunderbolt port (receptacle) of the machine.
     *
     * @param interfaceName its network interface from {@code networksetup -listallhardwareports}, or null
     * @param domainUuid the port's bus domain UUID (what a cabled peer lists), or null
     * @param connected a cable is in the port
     * @param speedGbps negotiated link speed, or null
     * @param peerModel model of the Mac directly attached, or null
     * @param peerDomainUuid the attached Mac's domain UUID for its own port, or null
     * @param peerMachine the attached Mac's inventory name when it was identified among the machines gathered
     *                    together, or null
     * @param peerPort the attached Mac's port, when identified
     * @param otherDevices drives, docks and hubs on the port
     */
    public record ThunderboltPort(int port, String interfaceName, String domainUuid, boolean connected, Double speedGbps,
                                  String peerModel, String peerDomainUuid, String peerMachine, Integer peerPort,
                                  List<String> otherDevices) {

        public ThunderboltPort {
            otherDevices = List.copyOf(otherDevices);
        }

        public ThunderboltPort withPeer(String machine, int port) {
            return new ThunderboltPort(this.port, interfaceName, domainUuid, connected, speedGbps, peerModel, peerDomainUuid,
                    machine, port, otherDevices);
        }
    }
}
