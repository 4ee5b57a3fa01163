package io.macfleet.mdm;

import io.macfleet.inventory.MdmServer;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;

/** The registry of MDM adapters by kind: the one place that turns the inventory's {@code mdm:} section into a client. */
public final class MdmAdapters {
    /**
     * Every kind macfleet can drive, registered in {@code META-INF/services/io.macfleet.mdm.MdmAdapter}: the adapters
     * (such as {@code mdm.nanohub}) depend on this package, so naming them here would make a package cycle.
     */
    public static final List<MdmAdapter> ALL = ServiceLoader.load(MdmAdapter.class, MdmAdapter.class.getClassLoader())
            .stream().map(ServiceLoader.Provider::get).toList();

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
