package io.macfleet.database;

/** The database cannot be opened, migrated or written. */
public class DatabaseException extends RuntimeException {
    public DatabaseException(String message, Throwable cause) {
        super(message, cause);
    }
}
