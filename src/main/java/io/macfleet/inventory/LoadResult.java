package io.macfleet.inventory;

import java.util.List;

/**
 * The outcome of loading an inventory directory: the resolved inventory when there is no error, else every
 * error found, sorted by file, line and column.
 */
public record LoadResult(Inventory inventory, List<InventoryError> errors) {

    public LoadResult {
        errors = List.copyOf(errors);
    }

    public boolean valid() {
        return errors.isEmpty();
    }
}
