package io.macfleet.ssh;

import io.macfleet.secrets.SecretReference;

import java.util.Objects;

/**
 * How to reach one machine over SSH: the connection settings the inventory resolves for it.
 *
 * @param machine the machine's name in the inventory (the identity host keys are pinned to)
 * @param host host name or IP address
 * @param port SSH port
 * @param user login user
 * @param privateKey where the private key is (OpenSSH, PEM or PKCS#8 text), or null to use an ssh-agent
 * @param passphrase where the private key's passphrase is, or null when the key is not encrypted
 * @param pinnedHostKey the expected host key fingerprint as OpenSSH prints it ({@code SHA256:base64}), or null
 */
public record SshTarget(String machine, String host, int port, String user, SecretReference privateKey,
                        SecretReference passphrase, String pinnedHostKey) {

    public static final int DEFAULT_PORT = 22;

    public SshTarget {
        requireText(machine, "machine name");
        requireText(host, "address of " + machine);
        requireText(user, "ssh.user of " + machine);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("ssh.port of " + machine + " must be 1..65535, was " + port);
        }
        if (pinnedHostKey != null) {
            pinnedHostKey = HostKeyFingerprint.parse(pinnedHostKey).orElseThrow(() -> new IllegalArgumentException(
                    "ssh.hostKey of " + machine + " must be a SHA-256 fingerprint as `ssh-keygen -lf` prints it"
                            + " (SHA256: followed by 43 base64 characters)"));
        }
    }

    /** A target with a private key and no pinned host key, port 22. */
    public static SshTarget of(String machine, String host, String user, SecretReference privateKey) {
        return new SshTarget(machine, host, DEFAULT_PORT, user, privateKey, null, null);
    }

    public SshTarget withPort(int newPort) {
        return new SshTarget(machine, host, newPort, user, privateKey, passphrase, pinnedHostKey);
    }

    public SshTarget withPassphrase(SecretReference newPassphrase) {
        return new SshTarget(machine, host, port, user, privateKey, newPassphrase, pinnedHostKey);
    }

    public SshTarget withPinnedHostKey(String fingerprint) {
        return new SshTarget(machine, host, port, user, privateKey, passphrase, fingerprint);
    }

    /** {@code host:port} (IPv6 literals in brackets), for messages. */
    public String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    private static void requireText(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(what + " is missing");
        }
    }

    @Override
    public String toString() {
        // Only references, never secret values, are held here; still spelled out to keep it that way.
        return "SshTarget[" + machine + " " + user + "@" + address() + ", key " + Objects.toString(privateKey, "ssh-agent")
                + (pinnedHostKey == null ? "" : ", host key " + pinnedHostKey) + "]";
    }
}
