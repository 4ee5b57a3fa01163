package io.macfleet.deployment;

import java.util.Optional;

/**
 * What one rank of a deployed cluster is doing, as read from its Mac: launchd's view of the daemon and what the
 * daemon's definition says it runs. The supervision reads the same record.
 *
 * @param launchd     {@code launchctl print system/LABEL} parsed (not loaded when the daemon is not there)
 * @param nodeVersion the node version the deployed plist names; empty when nothing was deployed
 * @param nodeSha256  SHA-256 of the node's jar the plist runs
 * @param modelSha256 SHA-256 of the model the plist serves
 * @param error       why the Mac could not be read (unreachable, ...); then the rest is empty
 * @param clusterServes rank 0's /health said the cluster serves when the status was read
 */
public record NodeRankStatus(int rank, String machine, LaunchdService launchd, Optional<String> nodeVersion,
                             Optional<String> nodeSha256, Optional<String> modelSha256, Optional<String> error, boolean clusterServes) {

    /** As read from the Mac alone, before anyone asked the cluster's endpoint whether it serves. */
    public NodeRankStatus(int rank, String machine, LaunchdService launchd, Optional<String> nodeVersion,
                          Optional<String> nodeSha256, Optional<String> modelSha256, Optional<String> error) {
        this(rank, machine, launchd, nodeVersion, nodeSha256, modelSha256, error, false);
    }

    /** The same, knowing that rank 0's /health said the whole cluster serves (every rank joined it). */
    public NodeRankStatus servingCluster() {
        return new NodeRankStatus(rank, machine, launchd, nodeVersion, nodeSha256, modelSha256, error, true);
    }

    /** Running now and not exiting over and over (see {@link #crashLooping()}). */
    public boolean running() {
        return error.isEmpty() && launchd.running() && !crashLooping();
    }

    /**
     * launchd started it again after it failed (a non-zero exit, at least two runs): whatever state launchd shows at
     * this instant, the rank does not serve; its log says why. A rank stopped by a signal (a kill, a reboot) is not.
     */
    public boolean crashLooping() {
        // A rank that left the mesh when a peer went and was started again has the same counters; while the cluster
        // serves, every rank is in it, so none of them loops.
        return !clusterServes && error.isEmpty() && launchd.loaded() && launchd.runs().orElse(0) >= 2
                && launchd.lastExit() instanceof LaunchdService.LastExit.Code code && code.code() != 0;
    }

    public String state() {
        if (error.isPresent()) {
            return "unreachable";
        }
        if (!launchd.loaded()) {
            return nodeSha256.isPresent() ? "not loaded" : "not deployed";
        }
        if (crashLooping()) {
            return "crash-looping";
        }
        return launchd.state().isEmpty() ? "unknown" : launchd.state();
    }

    public java.util.OptionalLong pid() {
        return launchd.pid();
    }

    public java.util.OptionalInt runs() {
        return launchd.runs();
    }
}
