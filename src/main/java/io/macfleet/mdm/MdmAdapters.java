package io.macfleet.mdm;

import io.macfleet.inventory.MdmServer;
import io.macfleet.mdm.nanohub.NanoHubAdapter;
import java.time.Duration;
import java.util.List;

/** The registry of MDM adapters by kind: the one place that turns the inventory's {@code mdm:} section into a client. */
public final class MdmAdapters {
    /** Every kind macfleet can drive. */
    public static final List<MdmAdapter> ALL = List.of(new NanoHubAdapter());

    private MdmAdapters() {
    }

    /** The adapter of the server's kind, connected. */
    public static MdmConnection connect(MdmServer server, Duration deadline) {
        return ALL.stream().filter(adapter -> adapter.kind().equals(server.kind())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("the inventory's mdm.kind '" + server.kind() + "' is not one macfleet knows ("
                        + String.join(", ", ALL.stream().map(MdmAdapter::kind).toList()) + ")"))
                .connect(server, deadline);
    }
}
