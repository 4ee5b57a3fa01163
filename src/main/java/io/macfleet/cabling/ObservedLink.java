package io.macfleet.cabling;

import io.macfleet.facts.LinkSpeed;
import io.macfleet.inventory.PortReference;
import java.util.Optional;

/**
 * A cable between two machines of the cluster as the Thunderbolt facts show it.
 *
 * @param first one end (the lower port reference)
 * @param second the other end
 * @param firstSpeed the speed the first machine reports for its port
 * @param secondSpeed the speed the second machine reports for its port (empty when it does not see the link)
 * @param confirmed both machines list each other on these ports; only then does the link count
 */
public record ObservedLink(PortReference first, PortReference second, Optional<LinkSpeed> firstSpeed,
                           Optional<LinkSpeed> secondSpeed, boolean confirmed) {

    public boolean joins(String machineA, String machineB) {
        return (first.machine().equals(machineA) && second.machine().equals(machineB))
                || (first.machine().equals(machineB) && second.machine().equals(machineA));
    }

    public boolean joinsMachine(String machine) {
        return first.machine().equals(machine) || second.machine().equals(machine);
    }

    public PortReference endOf(String machine) {
        return first.machine().equals(machine) ? first : second;
    }

    public PortReference otherEnd(String machine) {
        return first.machine().equals(machine) ? second : first;
    }

    /** The slower of the two ends' speeds: a link is only as fast as its slowest side. */
    public Optional<LinkSpeed> speed() {
        if (firstSpeed.isEmpty()) {
            return secondSpeed;
        }
        if (secondSpeed.isEmpty()) {
            return firstSpeed;
        }
        return Optional.of(firstSpeed.get().gigabitsPerSecond() <= secondSpeed.get().gigabitsPerSecond() ? firstSpeed.get() : secondSpeed.get());
    }

    public boolean isThunderbolt5() {
        return speed().map(LinkSpeed::isThunderbolt5).orElse(false);
    }

    @Override
    public String toString() {
        return first + " <-> " + second;
    }
}
