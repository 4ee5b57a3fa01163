package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The fleet's cables. Thread-safe; every change is visible at once to every simulated Mac's commands. */
public final class Cabling {
    private final List<Cable> cables = new ArrayList<>();

    public synchronized void plug(Cable cable) {
        for (Cable existing : cables) {
            if (existing.touches(cable.a()) || existing.touches(cable.b())) {
                throw new IllegalStateException("cannot plug " + cable + ": port already used by " + existing);
            }
        }
        cables.add(cable);
    }

    public void plug(String a, String b, LinkSpeed speed) {
        plug(new Cable(PortRef.parse(a), PortRef.parse(b), speed));
    }

    /** Removes the cable at this port, if any, and returns it. */
    public synchronized Optional<Cable> unplug(PortRef port) {
        for (Cable cable : cables) {
            if (cable.touches(port)) {
                cables.remove(cable);
                return Optional.of(cable);
            }
        }
        return Optional.empty();
    }

    /** Moves one end of the cable plugged into {@code from} to {@code to} (e.g. the wrong port). */
    public synchronized Cable move(PortRef from, PortRef to) {
        Cable cable = unplug(from).orElseThrow(() -> new IllegalStateException("no cable in " + from));
        Cable moved = cable.a().equals(from)
                ? new Cable(to, cable.b(), cable.speed(), cable.oneSided(), cable.rdmaDown())
                : new Cable(cable.a(), to, cable.speed(), cable.oneSided(), cable.rdmaDown());
        try {
            plug(moved);
        } catch (RuntimeException e) {
            cables.add(cable);
            throw e;
        }
        return moved;
    }

    /** Replaces the cable at this port with one of another speed or sidedness (a TB4 cable, a half-seated plug). */
    public synchronized Cable replace(PortRef port, LinkSpeed speed, boolean oneSided) {
        return replace(port, speed, oneSided, false);
    }

    /** Replaces the cable at this port with one of another speed, sidedness or RDMA state (a faulty cable). */
    public synchronized Cable replace(PortRef port, LinkSpeed speed, boolean oneSided, boolean rdmaDown) {
        Cable cable = unplug(port).orElseThrow(() -> new IllegalStateException("no cable in " + port));
        Cable replacement = new Cable(cable.a(), cable.b(), speed, oneSided, rdmaDown);
        cables.add(replacement);
        return replacement;
    }

    public synchronized Optional<Cable> at(PortRef port) {
        return cables.stream().filter(c -> c.touches(port)).findFirst();
    }

    public synchronized List<Cable> all() {
        return List.copyOf(cables);
    }
}
