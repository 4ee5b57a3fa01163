package io.macfleet.runtime;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Log lines that mean RDMA over Thunderbolt failed, shared by the runtimes whose ranks talk over it (the bundled node,
 * MLX's jaccl backend). Here in runtime, below supervision, so that a runtime can name them without importing the
 * supervisor that reads logs for them.
 */
public final class RdmaFaultLines {

    /**
     * Failure signatures of RDMA over Thunderbolt as exo and MLX users report them (exo #1847, #1390, #1973,
     * ml-explore/mlx #3207): after these, the nodes crash in a loop until every machine reboots.
     */
    public static final List<Pattern> SIGNATURES = List.of(
            Pattern.compile("Changing queue pair to (RTR|RTS|INIT) failed with errno \\d+"),
            Pattern.compile("\\[jaccl\\] Recv failed with errno=?\\d+"),
            Pattern.compile("\\[jaccl\\] Send failed with errno=?\\d+"),
            Pattern.compile("Couldn't allocate protection domain"));

    private RdmaFaultLines() {
    }
}
