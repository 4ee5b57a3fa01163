package io.macfleet.ssh;

import java.time.Instant;
import java.util.Objects;

/**
 * A host key recorded on first contact.
 *
 * @param machine machine name
 * @param address {@code host:port} it was seen at
 * @param keyType SSH key type, e.g. {@code ssh-ed25519}
 * @param fingerprint {@code SHA256:base64}
 * @param recordedAt when it was recorded
 */
public record StoredHostKey(String machine, String address, String keyType, String fingerprint, Instant recordedAt) {
    public StoredHostKey {
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(keyType, "keyType");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(recordedAt, "recordedAt");
    }
}
