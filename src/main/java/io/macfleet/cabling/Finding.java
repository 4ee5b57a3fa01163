package io.macfleet.cabling;

import io.macfleet.inventory.PortReference;
import java.util.List;

/**
 * One problem (or note) the cabling check found, with the exact fix in plain words.
 */
public record Finding(Severity severity, Code code, List<String> machines, List<PortReference> ports,
                      String message, String fix) {

    public enum Severity { ERROR, WARNING, INFO }

    public enum Code {
        MISSING_FACTS,
        MISSING_LINK,
        ONE_SIDED_LINK,
        SLOW_LINK,
        WRONG_PORTS,
        DUPLICATE_LINK,
        UNPLANNED_LINK,
        OUTSIDE_DEVICE,
        RDMA_INCAPABLE_PORT,
        MACOS_VERSION_MISMATCH,
        BRIDGE_ACTIVE,
        RDMA_DISABLED,
        RDMA_STATUS_UNKNOWN,
        NO_RDMA_DEVICE,
        RDMA_PORT_DOWN
    }

    public Finding {
        machines = List.copyOf(machines);
        ports = List.copyOf(ports);
    }
}
