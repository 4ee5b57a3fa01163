package io.macfleet.supervision;

import io.macfleet.lease.Leases;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Leases shared by several supervising "instances" in one test: a key is held by one owner until closed or
 * {@link #breakConnection(String) its connection breaks}, as PostgreSQL session advisory locks behave.
 */
final class InMemoryLeases {

    private final Map<String, String> owners = new HashMap<>();

    /** The Leases one instance sees. */
    Leases instance(String owner) {
        return key -> {
            synchronized (owners) {
                String current = owners.putIfAbsent(key, owner);
                if (current != null && !current.equals(owner)) {
                    return Optional.empty();
                }
            }
            return Optional.of(new Leases.Lease() {
                @Override
                public String key() {
                    return key;
                }

                @Override
                public boolean held() {
                    synchronized (owners) {
                        return owner.equals(owners.get(key));
                    }
                }

                @Override
                public void close() {
                    synchronized (owners) {
                        owners.remove(key, owner);
                    }
                }
            });
        };
    }

    /** The owner's database connection broke: every lease it held is free. */
    void breakConnection(String owner) {
        synchronized (owners) {
            owners.values().removeIf(owner::equals);
        }
    }
}
