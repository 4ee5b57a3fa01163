package io.macfleet.lease;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Leases for the embedded H2 database, which one {@code macfleet serve} instance uses: kept in this process. Instances
 * created for the same database (the same URL) in one process share one table of holders, so two service containers
 * started in one JVM (tests) still exclude each other; a second process on the same H2 file is not coordinated (H2
 * is for one instance; several instances use PostgreSQL).
 */
public final class InProcessLeases implements Leases, AutoCloseable {

    private static final ConcurrentMap<String, ConcurrentMap<String, InProcessLeases>> HOLDERS_BY_DATABASE = new ConcurrentHashMap<>();

    private final ConcurrentMap<String, InProcessLeases> holders;
    private final ConcurrentMap<String, InProcessLease> held = new ConcurrentHashMap<>();

    public InProcessLeases(String database) {
        this.holders = HOLDERS_BY_DATABASE.computeIfAbsent(database, ignored -> new ConcurrentHashMap<>());
    }

    @Override
    public Optional<Lease> tryAcquire(String key) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("a lease key must not be blank");
        }
        InProcessLeases holder = holders.putIfAbsent(key, this);
        if (holder != null && holder != this) {
            return Optional.empty();
        }
        return Optional.of(held.computeIfAbsent(key, InProcessLease::new));
    }

    @Override
    public void close() {
        held.values().forEach(InProcessLease::close);
    }

    private final class InProcessLease implements Lease {
        private final String key;
        private volatile boolean released;

        InProcessLease(String key) {
            this.key = key;
        }

        @Override
        public String key() {
            return key;
        }

        @Override
        public boolean held() {
            return !released;
        }

        @Override
        public void close() {
            if (held.remove(key, this)) {
                released = true;
                holders.remove(key, InProcessLeases.this);
            }
        }
    }
}
