package io.macfleet.lease;

import java.util.Optional;

/**
 * Exclusive ownership of a named piece of continuous work (observing a machine, supervising a cluster) among the
 * {@code macfleet serve} instances that share one database. On PostgreSQL it rests on the database's own locks
 * (session advisory locks), so a crashed instance loses its leases with its connection; the embedded H2 database
 * serves one instance, which holds them all. The observation loop (issue 13) and the node supervision (issue 17)
 * both go through this: a restart or reboot is never ordered twice because only the holder acts.
 */
public interface Leases {

    /**
     * Takes the lease on {@code key} for this instance, or confirms this instance still holds it.
     *
     * @param key what is owned, e.g. {@code observe:studio-01} or {@code supervise:llm-a}
     * @return the lease, or empty when another instance holds it now
     */
    Optional<Lease> tryAcquire(String key);

    /** A held lease; closing it lets another instance take the work. */
    interface Lease extends AutoCloseable {
        String key();

        /** False once the lease was lost (the database connection behind it broke): stop acting on it. */
        boolean held();

        @Override
        void close();
    }
}
