package io.macfleet.inventory;

/** The inventory directory itself cannot be read (missing, not a directory, no permission). */
public class InventoryDirectoryException extends RuntimeException implements io.macfleet.command.CommandFailure {
    @Override
    public Kind failureKind() {
        return Kind.USAGE;
    }

    public InventoryDirectoryException(String message) {
        super(message);
    }
}
