package io.macfleet.inventory;

/** The inventory directory itself cannot be read (missing, not a directory, no permission). */
public class InventoryDirectoryException extends RuntimeException {
    public InventoryDirectoryException(String message) {
        super(message);
    }
}
