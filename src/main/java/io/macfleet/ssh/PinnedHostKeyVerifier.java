package io.macfleet.ssh;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;

import java.security.PublicKey;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * Accepts exactly the pinned host key of one machine: the fingerprint from the inventory if there is one,
 * otherwise the one recorded on first contact. A machine seen for the first time is recorded only when
 * the operator allowed it. SSHJ only learns "refused", so the reason is kept here and turned into a typed
 * error with both fingerprints by the caller.
 */
final class PinnedHostKeyVerifier implements HostKeyVerifier {

    private final SshTarget target;
    private final HostKeyStore store;
    private final boolean acceptNew;
    private final AuditLog auditLog;
    private final String actor;
    private final Clock clock;
    private volatile SshException refusal;

    PinnedHostKeyVerifier(SshTarget target, HostKeyStore store, boolean acceptNew, AuditLog auditLog, String actor,
                          Clock clock) {
        this.target = target;
        this.store = store;
        this.acceptNew = acceptNew;
        this.auditLog = auditLog;
        this.actor = actor;
        this.clock = clock;
    }

    /** Why the last key was refused, if it was. */
    Optional<SshException> refusal() {
        return Optional.ofNullable(refusal);
    }

    @Override
    public boolean verify(String hostname, int port, PublicKey key) {
        String presented = HostKeyFingerprint.of(key);
        String keyType = HostKeyFingerprint.keyType(key);
        if (target.pinnedHostKey() != null) {
            if (target.pinnedHostKey().equals(presented)) {
                return true;
            }
            refusal = changed(target.pinnedHostKey(), "pinned in the inventory (ssh.hostKey)", keyType, presented,
                    "update ssh.hostKey of " + target.machine() + " in the inventory");
            return false;
        }
        Optional<StoredHostKey> stored = store.find(target.machine());
        if (stored.isPresent()) {
            return matchesStored(stored.get(), keyType, presented);
        }
        if (!acceptNew) {
            refusal = new SshException.HostKeyNotTrusted(target, "host key not known, connection refused: the machine"
                    + " presented " + keyType + " " + presented + ". Verify it out of band (on the Mac: `ssh-keygen -lf"
                    + " /etc/ssh/ssh_host_ed25519_key.pub`), then either run again with --accept-new-host-keys or"
                    + " set ssh.hostKey: " + presented + " for " + target.machine() + " in the inventory", presented);
            return false;
        }
        StoredHostKey first = new StoredHostKey(target.machine(), target.address(), keyType, presented, clock.instant());
        if (!store.recordIfAbsent(first)) {
            // Another connection recorded a key in the meantime: compare with that one like any later contact.
            return store.find(target.machine()).map(winner -> matchesStored(winner, keyType, presented)).orElse(false);
        }
        auditLog.record(new AuditEvent(clock.instant(), actor, target.machine(), "ssh.host-key.record",
                keyType + " " + presented + " at " + target.address() + " (first contact, new host keys accepted)",
                AuditEvent.Outcome.SUCCESS));
        return true;
    }

    private boolean matchesStored(StoredHostKey stored, String keyType, String presented) {
        if (stored.fingerprint().equals(presented)) {
            return true;
        }
        refusal = changed(stored.fingerprint(), "recorded " + stored.recordedAt() + " (" + stored.keyType() + " at "
                + stored.address() + ")", keyType, presented,
                "`macfleet ssh forget-host-key " + target.machine() + "` and connect again with --accept-new-host-keys,"
                        + " or set ssh.hostKey: " + presented + " in the inventory");
        return false;
    }

    private SshException changed(String expected, String expectedSource, String keyType, String presented, String fix) {
        return new SshException.HostKeyChanged(target, "HOST KEY CHANGED, connection refused: expected " + expected
                + " (" + expectedSource + "), the machine presented " + keyType + " " + presented + ". Someone may be"
                + " intercepting the connection, or the Mac was reinstalled. Verify the new key out of band (on the Mac:"
                + " `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`); only then " + fix + ".", expected, presented);
    }

    @Override
    public List<String> findExistingAlgorithms(String hostname, int port) {
        // Prefer the key type we recorded, so a Mac offering several host keys (ed25519, ecdsa, rsa) is not
        // taken for changed because a different one was negotiated.
        if (target.pinnedHostKey() != null) {
            return List.of();
        }
        return store.find(target.machine())
                .map(StoredHostKey::keyType)
                .map(type -> type.equals("ssh-rsa") ? List.of("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa") : List.of(type))
                .orElse(List.of());
    }
}
