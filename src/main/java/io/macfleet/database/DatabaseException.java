package io.macfleet.database;

/** The database cannot be opened, migrated or written. */
public class DatabaseException extends RuntimeException implements io.macfleet.command.CommandFailure {
    @Override
    public Kind failureKind() {
        return Kind.CHECK_FAILED;
    }

    public DatabaseException(String message, Throwable cause) {
        super(message, cause);
    }
}
