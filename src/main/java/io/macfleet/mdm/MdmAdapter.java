package io.macfleet.mdm;

import io.macfleet.inventory.MdmServer;
import java.time.Duration;

/**
 * One kind of MDM server ({@code mdm.kind} in the inventory). Adding a kind (Fleet, Jamf Pro) is a class implementing
 * this, one line in {@link MdmAdapters#ALL} and the kind in {@code schemas/inventory.schema.json}.
 */
public interface MdmAdapter {

    /** The inventory's {@code mdm.kind}, e.g. {@code nanohub}. */
    String kind();

    /**
     * A connection to the server; every request bounded by {@code deadline}.
     *
     * @throws IllegalArgumentException naming what in the {@code mdm:} section is missing or wrong
     */
    MdmConnection connect(MdmServer server, Duration deadline);
}
