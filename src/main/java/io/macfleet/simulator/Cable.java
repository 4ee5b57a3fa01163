package io.macfleet.simulator;

import java.util.Objects;

/**
 * A Thunderbolt cable between two ports. A one-sided cable is seen by end {@code a} only (a half-seated
 * connector or a failing cable: one Mac lists the peer, the other does not). A cable whose RDMA is down links at
 * Thunderbolt speed on both sides, but its RDMA ports stay PORT_DOWN (a faulty cable or a stale RDMA state).
 */
public record Cable(PortRef a, PortRef b, LinkSpeed speed, boolean oneSided, boolean rdmaDown) {
    public Cable {
        Objects.requireNonNull(a, "a");
        Objects.requireNonNull(b, "b");
        Objects.requireNonNull(speed, "speed");
        if (a.machine().equals(b.machine())) {
            throw new IllegalArgumentException("a cable from " + a + " to " + b + " loops back into the same Mac");
        }
    }

    public Cable(PortRef a, PortRef b, LinkSpeed speed, boolean oneSided) {
        this(a, b, speed, oneSided, false);
    }

    public Cable(PortRef a, PortRef b, LinkSpeed speed) {
        this(a, b, speed, false);
    }

    public boolean touches(PortRef port) {
        return a.equals(port) || b.equals(port);
    }

    /** The far end as seen from {@code port}, or null if that end does not see the link. */
    public PortRef peerSeenFrom(PortRef port) {
        if (a.equals(port)) {
            return b;
        }
        if (b.equals(port)) {
            return oneSided ? null : a;
        }
        return null;
    }

    @Override
    public String toString() {
        return a + " <-> " + b + " (" + speed + (oneSided ? ", one-sided" : "") + (rdmaDown ? ", RDMA down" : "") + ")";
    }
}
