package io.macfleet.ssh;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Host keys in the {@code ssh_host_keys} table (migration V2_1). The primary key on the machine name makes
 * recording race-free: of two concurrent first contacts exactly one insert wins, the other is reported as
 * "already recorded" and its key is then compared like any later contact.
 */
@Singleton
public final class JdbcHostKeyStore implements HostKeyStore {

    private final DataSource dataSource;

    @Inject
    public JdbcHostKeyStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public Optional<StoredHostKey> find(String machine) {
        String sql = "SELECT machine, address, key_type, fingerprint, recorded_at FROM ssh_host_keys WHERE machine = ?";
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, machine);
            try (ResultSet row = statement.executeQuery()) {
                if (!row.next()) {
                    return Optional.empty();
                }
                return Optional.of(new StoredHostKey(row.getString(1), row.getString(2), row.getString(3),
                        row.getString(4), row.getTimestamp(5).toInstant()));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the recorded host key of " + machine + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean recordIfAbsent(StoredHostKey key) {
        if (find(key.machine()).isPresent()) {
            return false;
        }
        String sql = "INSERT INTO ssh_host_keys (machine, address, key_type, fingerprint, recorded_at) VALUES (?, ?, ?, ?, ?)";
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, key.machine());
            statement.setString(2, key.address());
            statement.setString(3, key.keyType());
            statement.setString(4, key.fingerprint());
            statement.setTimestamp(5, Timestamp.from(key.recordedAt()));
            statement.executeUpdate();
            return true;
        } catch (SQLException e) {
            // A concurrent first contact inserted first (unique violation, SQLState class 23): not an error.
            if (e.getSQLState() != null && e.getSQLState().startsWith("23")) {
                return false;
            }
            throw new IllegalStateException("cannot record the host key of " + key.machine() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean forget(String machine) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement("DELETE FROM ssh_host_keys WHERE machine = ?")) {
            statement.setString(1, machine);
            return statement.executeUpdate() > 0;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot forget the host key of " + machine + ": " + e.getMessage(), e);
        }
    }
}
