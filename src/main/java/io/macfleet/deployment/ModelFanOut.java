package io.macfleet.deployment;

import io.macfleet.ssh.SshSettings;
import java.util.Optional;

/**
 * Puts a release's model on every Mac of a cluster before node deploy stages each Mac, so that staging finds it in
 * place (root's, with its SHA-256) instead of sending it to each Mac from this host. Implemented by the model
 * placement (Mac-to-Mac over Thunderbolt); an extension point so that deployment does not depend on it.
 */
public interface ModelFanOut {

    /** What a fan-out did: a sentence for the deploy's log, and the Macs that hold the model verified now. */
    record Placed(String summary, java.util.Set<String> verifiedOn) {
        public Placed {
            verifiedOn = java.util.Set.copyOf(verifiedOn);
        }
    }

    /**
     * What was placed, or empty when this fan-out does not apply (a model of several files, a
     * cluster of one Mac). Throws when it applied and failed; the deploy then copies the model itself.
     *
     * @param catalogueName the release's model as the catalogue names it (carried in the release, never looked up by path)
     */
    Optional<Placed> fanOut(String cluster, String catalogueName, SshSettings settings, NodeDeployer.Listener listener);
}
