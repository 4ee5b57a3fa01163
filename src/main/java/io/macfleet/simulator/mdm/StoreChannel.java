package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/** The in-process channel of the simulated NanoHUB: commands arrive through {@link SimulatedMdmDevice#receive}. */
final class StoreChannel implements DeviceChannel {
    private final String enrollmentId;
    private final DdmStore store;

    StoreChannel(String enrollmentId, DdmStore store) {
        this.enrollmentId = enrollmentId;
        this.store = store;
    }

    @Override
    public List<SimulatedMdmDevice.ReceivedCommand> commands() {
        return List.of();
    }

    @Override
    public List<DdmStore.StoredDeclaration> declarations(Map<String, String> knownTokens) {
        List<DdmStore.StoredDeclaration> delivered = store.deliver(enrollmentId);
        for (DdmStore.StoredDeclaration declaration : delivered) {
            if (!declaration.serverToken().equals(knownTokens.get(declaration.identifier()))) {
                store.recordDelivery(enrollmentId, declaration);
            }
        }
        return delivered;
    }

    @Override
    public void report(ObjectNode report) {
        store.receiveStatus(enrollmentId, report);
    }
}
