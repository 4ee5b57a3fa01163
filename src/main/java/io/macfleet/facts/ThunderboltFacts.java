package io.macfleet.facts;

import java.util.List;
import java.util.Optional;

/**
 * The Thunderbolt buses (ports) of one Mac.
 */
public record ThunderboltFacts(List<ThunderboltBus> buses) {

    public ThunderboltFacts {
        buses = List.copyOf(buses);
    }

    public Optional<ThunderboltBus> busForReceptacle(int receptacle) {
        return buses.stream()
                .filter(bus -> bus.receptacle().isPresent() && bus.receptacle().getAsInt() == receptacle)
                .findFirst();
    }

    public Optional<ThunderboltBus> busWithDomain(String domainUuid) {
        return buses.stream().filter(bus -> bus.domainUuid().filter(domainUuid::equalsIgnoreCase).isPresent()).findFirst();
    }
}
