package io.macfleet.deployment;

import io.macfleet.ssh.SshSettings;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Puts a release's model on every Mac of a cluster before node deploy stages each Mac, so that staging finds it in
 * place (root's, with its SHA-256) instead of sending it to each Mac from this host. Implemented by the model
 * placement (Mac-to-Mac over Thunderbolt); an extension point so that deployment does not depend on it.
 */
public interface ModelFanOut {

    /**
     * A sentence saying what was placed, or empty when this fan-out does not apply to the file (not a catalogue model,
     * a cluster of one Mac). Throws when it applied and failed; the deploy then copies the model itself.
     */
    Optional<String> place(String cluster, Path modelFile, SshSettings settings, NodeDeployer.Listener listener);
}
