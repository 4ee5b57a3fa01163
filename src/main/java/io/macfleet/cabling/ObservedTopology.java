package io.macfleet.cabling;

import io.macfleet.facts.LinkSpeed;
import io.macfleet.facts.ThunderboltBus;
import io.macfleet.facts.ThunderboltDevice;
import io.macfleet.inventory.PortReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The cables as observed: built from every machine's Thunderbolt facts. A cable between two Macs is
 * recognised because each side lists, as the peer on a port, the other side's bus domain UUID.
 */
public record ObservedTopology(List<ObservedLink> links, List<ForeignAttachment> foreignAttachments) {

    /**
     * Something on a machine's port that is not a Mac of this cluster: a drive, a dock, a hub, or a Mac
     * that is not part of the cluster.
     */
    public record ForeignAttachment(PortReference port, ThunderboltDevice device) {
    }

    public ObservedTopology {
        links = List.copyOf(links);
        foreignAttachments = List.copyOf(foreignAttachments);
    }

    private record PortSide(PortReference port, Optional<LinkSpeed> speed, String peerDomain) {
    }

    public static ObservedTopology build(List<MachineCablingFacts> machines) {
        Map<String, PortReference> portsByDomain = new HashMap<>();
        for (MachineCablingFacts machine : machines) {
            for (ThunderboltBus bus : machine.thunderbolt().buses()) {
                if (bus.domainUuid().isPresent() && bus.receptacle().isPresent()) {
                    portsByDomain.put(normalise(bus.domainUuid().get()), new PortReference(machine.machine(), bus.receptacle().getAsInt()));
                }
            }
        }
        Map<PortReference, PortSide> sides = new LinkedHashMap<>();
        List<ForeignAttachment> foreign = new ArrayList<>();
        for (MachineCablingFacts machine : machines) {
            for (ThunderboltBus bus : machine.thunderbolt().buses()) {
                if (bus.receptacle().isEmpty()) {
                    continue;
                }
                PortReference here = new PortReference(machine.machine(), bus.receptacle().getAsInt());
                Optional<ThunderboltDevice> peer = bus.directPeerHost();
                if (peer.isPresent()) {
                    PortReference there = portsByDomain.get(normalise(peer.get().domainUuid().orElseThrow()));
                    if (there == null || there.machine().equals(here.machine())) {
                        foreign.add(new ForeignAttachment(here, peer.get()));
                    } else {
                        sides.put(here, new PortSide(here, bus.speed(), peer.get().domainUuid().get()));
                    }
                }
                for (ThunderboltDevice device : bus.otherDevices()) {
                    foreign.add(new ForeignAttachment(here, device));
                }
            }
        }
        List<ObservedLink> links = new ArrayList<>();
        for (PortSide side : sides.values()) {
            PortReference there = portsByDomain.get(normalise(side.peerDomain()));
            PortSide back = sides.get(there);
            boolean confirmed = back != null && portsByDomain.get(normalise(back.peerDomain())).equals(side.port());
            if (confirmed && side.port().compareTo(there) > 0) {
                continue;
            }
            links.add(new ObservedLink(side.port(), there, side.speed(), confirmed ? back.speed() : Optional.empty(), confirmed));
        }
        links.sort((a, b) -> a.first().compareTo(b.first()) != 0 ? a.first().compareTo(b.first()) : a.second().compareTo(b.second()));
        return new ObservedTopology(links, foreign);
    }

    public List<ObservedLink> linksBetween(String machineA, String machineB) {
        return links.stream().filter(link -> link.joins(machineA, machineB)).toList();
    }

    private static String normalise(String uuid) {
        return uuid.toUpperCase(Locale.ROOT);
    }
}
