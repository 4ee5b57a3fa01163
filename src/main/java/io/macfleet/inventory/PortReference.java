package io.macfleet.inventory;

import java.util.Comparator;

/**
 * A Thunderbolt port (receptacle number) of a machine, written {@code studio-01:2}.
 */
public record PortReference(String machine, int port) implements Comparable<PortReference> {

    private static final Comparator<PortReference> ORDER =
            Comparator.comparing(PortReference::machine).thenComparingInt(PortReference::port);

    @Override
    public int compareTo(PortReference other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return machine + ":" + port;
    }
}
