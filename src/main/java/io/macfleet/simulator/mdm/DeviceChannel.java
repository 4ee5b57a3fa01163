package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * How a simulated Mac's MDM client reaches its server: in process ({@link StoreChannel}, the simulated NanoHUB) or
 * over Apple's check-in protocol ({@link CheckInChannel}, a real NanoHUB). The device's behaviour is the same for
 * both, so the simulated Mac that the demo uses is the one tested against the real server.
 */
interface DeviceChannel {

    /** Commands the server has for the device now, each already answered Acknowledged. */
    List<SimulatedMdmDevice.ReceivedCommand> commands();

    /**
     * Every declaration the server assigns to the device now. Only declarations whose token differs from
     * {@code knownTokens} (identifier → server token) are fetched; the rest come from what the channel fetched before.
     */
    List<DdmStore.StoredDeclaration> declarations(Map<String, String> knownTokens);

    /** Sends a (incremental) declarative status report. */
    void report(ObjectNode report);
}
