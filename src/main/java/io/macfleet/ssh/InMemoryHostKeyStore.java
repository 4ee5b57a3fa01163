package io.macfleet.ssh;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** A host key store that lives as long as the process: for tests and one-shot runs without a database. */
public final class InMemoryHostKeyStore implements HostKeyStore {

    private final ConcurrentMap<String, StoredHostKey> keys = new ConcurrentHashMap<>();

    @Override
    public Optional<StoredHostKey> find(String machine) {
        return Optional.ofNullable(keys.get(machine));
    }

    @Override
    public boolean recordIfAbsent(StoredHostKey key) {
        return keys.putIfAbsent(key.machine(), key) == null;
    }

    @Override
    public boolean forget(String machine) {
        return keys.remove(machine) != null;
    }
}
