package io.macfleet.inventory;

import java.nio.file.Path;
import java.util.Comparator;

/**
 * One problem of an inventory, positioned at a file, line and column (both 1-based). The message says what
 * is wrong and what is expected; it never contains a secret value.
 */
public record InventoryError(Path file, int line, int column, String message) implements Comparable<InventoryError> {

    private static final Comparator<InventoryError> ORDER = Comparator
            .comparing((InventoryError error) -> error.file().toString())
            .thenComparingInt(InventoryError::line)
            .thenComparingInt(InventoryError::column)
            .thenComparing(InventoryError::message);

    @Override
    public int compareTo(InventoryError other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + message;
    }
}
