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
        RDMA_PORT_DOWN;

        /**
         * Whether an OS update is what fixes it (a macOS version other than the cluster's target), not the cables or
         * provisioning: provisioning names it without failing, and an OS-update campaign is not blocked by it before it
         * updates (it is what the campaign is about to fix).
         */
        public boolean fixedByOsUpdate() {
            return this == MACOS_VERSION_MISMATCH;
        }
    }

    public Finding {
        machines = List.copyOf(machines);
        ports = List.copyOf(ports);
    }

    /** See {@link Code#fixedByOsUpdate()}. */
    public boolean fixedByOsUpdate() {
        return code.fixedByOsUpdate();
    }
}
