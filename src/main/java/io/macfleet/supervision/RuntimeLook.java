package io.macfleet.supervision;

import io.macfleet.runtime.RuntimeService.DaemonStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The latest look of this instance's supervisor at a cluster served by a runtime other than the bundled node
 * (llama.cpp, MLX): every daemon on every Mac, and what the supervisor made of it. Kept in memory by the instance that
 * holds the cluster's supervision lease (not yet in {@code supervision_status}, which holds the bundled node's shape).
 *
 * @param state what the supervisor decided: "serving", "ordered restart (...)", "crash loop", "RDMA failure", ...
 * @param acting the action under way (a coordinated reboot), if any
 */
public record RuntimeLook(String cluster, String runtime, String endpoint, Instant at, boolean serving, String state, Optional<String> alert,
                          Optional<String> acting, List<DaemonStatus> daemons) {
    public RuntimeLook {
        daemons = List.copyOf(daemons);
    }
}
