package io.macfleet.inventory;

import io.macfleet.secrets.SecretReference;

/**
 * How to reach a machine over SSH.
 *
 * @param privateKey reference to the private key, or null (then the ssh-agent at SSH_AUTH_SOCK is used)
 * @param passphrase reference to the key's passphrase, or null
 * @param hostKey pinned host key fingerprint ("SHA256:..."), or null when not pinned
 */
public record SshSettings(String user, int port, SecretReference privateKey, SecretReference passphrase, String hostKey) {
    public static final String DEFAULT_USER = "admin";
    public static final int DEFAULT_PORT = 22;
}
