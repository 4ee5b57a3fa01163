package io.macfleet.lease;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Leases as PostgreSQL session advisory locks ({@code pg_try_advisory_lock}) on one connection of this instance's
 * own, outside the pool: a lock lives exactly as long as that database session, so an instance that crashes or loses
 * its connection loses its leases with it and another instance takes the work over. The connection is never shared
 * with the pool, which would hand a locked session to unrelated work.
 */
public final class AdvisoryLockLeases implements Leases, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(AdvisoryLockLeases.class);
    private static final int VALIDATION_SECONDS = 5;

    /** Opens a new database session; called again after the previous one broke. */
    @FunctionalInterface
    public interface SessionOpener {
        Connection open() throws SQLException;
    }

    private final SessionOpener opener;
    private final Map<String, AdvisoryLease> held = new HashMap<>();
    private Connection session;
    private boolean closed;

    public AdvisoryLockLeases(SessionOpener opener) {
        this.opener = opener;
    }

    /**
     * The advisory lock number of a key: the first 8 bytes of SHA-256 over {@code macfleet.lease:KEY}, the same in
     * every instance and every release (a changed hash would let two versions hold one machine during an upgrade).
     */
    public static long lockNumber(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(("macfleet.lease:" + key).getBytes(StandardCharsets.UTF_8));
            long number = 0;
            for (int index = 0; index < Long.BYTES; index++) {
                number = (number << 8) | (digest[index] & 0xff);
            }
            return number;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public synchronized Optional<Lease> tryAcquire(String key) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("a lease key must not be blank");
        }
        if (closed) {
            return Optional.empty();
        }
        AdvisoryLease existing = held.get(key);
        if (existing != null) {
            return sessionAlive() ? Optional.of(existing) : Optional.empty();
        }
        try {
            Connection connection = session();
            try (PreparedStatement statement = connection.prepareStatement("select pg_try_advisory_lock(?)")) {
                statement.setLong(1, lockNumber(key));
                try (ResultSet result = statement.executeQuery()) {
                    if (result.next() && result.getBoolean(1)) {
                        AdvisoryLease lease = new AdvisoryLease(key);
                        held.put(key, lease);
                        return Optional.of(lease);
                    }
                    return Optional.empty();
                }
            }
        } catch (SQLException e) {
            LOG.warnf("cannot take the lease %s: %s", key, e.getMessage());
            loseSession();
            return Optional.empty();
        }
    }

    /** The keys this instance holds now (after checking that its session still lives). */
    public synchronized java.util.Set<String> heldKeys() {
        return sessionAlive() ? java.util.Set.copyOf(held.keySet()) : java.util.Set.of();
    }

    private Connection session() throws SQLException {
        if (session == null) {
            session = opener.open();
            session.setAutoCommit(true);
        }
        return session;
    }

    /** Whether the session that holds the locks still lives; when it broke, every lease is lost. */
    private boolean sessionAlive() {
        if (session == null) {
            return false;
        }
        try {
            if (session.isValid(VALIDATION_SECONDS)) {
                return true;
            }
        } catch (SQLException e) {
            // Treated like an invalid connection below.
        }
        LOG.warn("the database session holding this instance's leases broke; its leases are lost");
        loseSession();
        return false;
    }

    private void loseSession() {
        held.values().forEach(lease -> lease.lost = true);
        held.clear();
        if (session != null) {
            try {
                session.close();
            } catch (SQLException e) {
                // The session is gone either way.
            }
            session = null;
        }
    }

    private synchronized boolean stillHeld(AdvisoryLease lease) {
        return !lease.lost && held.get(lease.key) == lease && sessionAlive();
    }

    private synchronized void release(AdvisoryLease lease) {
        if (lease.lost || held.get(lease.key) != lease) {
            return;
        }
        held.remove(lease.key);
        lease.lost = true;
        try (PreparedStatement statement = session.prepareStatement("select pg_advisory_unlock(?)")) {
            statement.setLong(1, lockNumber(lease.key));
            statement.executeQuery().close();
        } catch (SQLException e) {
            LOG.warnf("cannot release the lease %s: %s", lease.key, e.getMessage());
            loseSession();
        }
    }

    /** Ends the session: every lease of this instance is released at once. */
    @Override
    public synchronized void close() {
        closed = true;
        if (session != null && !held.isEmpty()) {
            // The server ends a closed session's locks a moment after the client left; unlocking first hands them over now.
            try (java.sql.Statement statement = session.createStatement()) {
                statement.execute("select pg_advisory_unlock_all()");
            } catch (SQLException e) {
                // A broken session has no locks left to release.
            }
        }
        loseSession();
    }

    private final class AdvisoryLease implements Lease {
        private final String key;
        private volatile boolean lost;

        AdvisoryLease(String key) {
            this.key = key;
        }

        @Override
        public String key() {
            return key;
        }

        @Override
        public boolean held() {
            return stillHeld(this);
        }

        @Override
        public void close() {
            release(this);
        }

        @Override
        public String toString() {
            return "lease " + key;
        }
    }
}
