package io.macfleet.ssh;

import java.util.Optional;

/**
 * Host key fingerprints recorded on first contact (trust on first use, only when the operator allows it),
 * keyed by machine name. A recorded key is never overwritten: replacing one is an explicit {@link #forget}
 * by the operator followed by a new, allowed first contact.
 */
public interface HostKeyStore {

    Optional<StoredHostKey> find(String machine);

    /**
     * Records the machine's key if none is recorded yet.
     *
     * @return false, changing nothing, when a key is already recorded for the machine
     */
    boolean recordIfAbsent(StoredHostKey key);

    /** Removes the machine's recorded key; false when there was none. */
    boolean forget(String machine);
}
