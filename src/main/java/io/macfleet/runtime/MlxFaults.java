package io.macfleet.runtime;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Log lines of mlx_lm.server that mean MLX's RDMA transport failed, so that the supervisor's coordinated reboot
 * ({@code supervision.rdmaFailure}) applies: JACCL's queue-pair transitions failing with errno 22 (EINVAL) or 60
 * (ETIMEDOUT) ({@code mlx/distributed/jaccl/lib/jaccl/rdma.cpp}: "Changing queue pair to RTR failed with errno"), its
 * side channel not reaching a peer ("Couldn't connect", the TCP helpers of utils.cpp/tcp.cpp), and a segmentation
 * fault inside the RDMA library (librdma), as exo #1847, #1973, #2111 and mlx #4319 report them.
 */
final class MlxFaults {

    static final List<Pattern> LINES = List.of(
            Pattern.compile("\\[jaccl\\].*failed with errno (22|60)\\b"),
            Pattern.compile("\\[[A-Za-z_ ]+\\] Couldn't connect"),
            Pattern.compile("(?i)(SIGSEGV|segmentation fault).*(librdma|rdma)|(librdma|libibverbs).*(SIGSEGV|segmentation fault)"));

    private MlxFaults() {
    }
}
