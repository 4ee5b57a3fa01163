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
 */
public record NodeRankStatus(int rank, String machine, LaunchdService launchd, Optional<String> nodeVersion,
                             Optional<String> nodeSha256, Optional<String> modelSha256, Optional<String> error) {

    public boolean running() {
        return error.isEmpty() && launchd.running();
    }

    public String state() {
        if (error.isPresent()) {
            return "unreachable";
        }
        if (!launchd.loaded()) {
            return nodeSha256.isPresent() ? "not loaded" : "not deployed";
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
