package io.macfleet.console;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.fleet.Status;
import io.quarkus.arc.lookup.LookupIfProperty;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * A status column that exists only in test code: the memory the inventory states for each machine. It is a CDI bean
 * like the built-in columns and nothing else registers it; {@link StatusColumnExtensionTest} switches it on (other
 * tests see only the built-in columns).
 */
@ApplicationScoped
@LookupIfProperty(name = "test.inventory-memory-column", stringValue = "true")
public class InventoryMemoryColumn implements StatusColumn {

    @Override
    public String name() {
        return "Memory";
    }

    @Override
    public String title() {
        return "Memory (inventory)";
    }

    /** Between RDMA (300) and Cabling (400). */
    @Override
    public int order() {
        return 350;
    }

    @Override
    public Status cell(MachineState machine) {
        Integer memory = machine.machine().memoryGb();
        return memory == null ? Status.warning("not stated", "the inventory states no memory for " + machine.name())
                : Status.ok(memory + " GB", "the inventory says " + machine.name() + " has " + memory + " GB");
    }
}
