package io.macfleet.database;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;

/**
 * Run in a second process by {@link PrivateDatabaseTest}: tries what another local user would, connecting to
 * the database with the configured user and a guessed password, and reading the accounts.
 * Exit 0 when it got in, 3 when refused.
 */
public final class ConnectAttempt {

    public static void main(String... args) {
        try (Connection connection = DriverManager.getConnection(args[0], args[1], args[2]);
                ResultSet rows = connection.createStatement().executeQuery("select count(*) from information_schema.tables")) {
            rows.next();
            System.out.println("connected");
            System.exit(0);
        } catch (Exception e) {
            System.out.println("refused: " + e.getMessage());
            System.exit(3);
        }
    }
}
