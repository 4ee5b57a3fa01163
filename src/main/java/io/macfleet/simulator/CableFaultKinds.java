package io.macfleet.simulator;

import java.util.List;

/** The fault kinds of a cable, named by one of its ports; one class each, registered in {@link FaultKinds#standard()}. */
final class CableFaultKinds {

    private CableFaultKinds() {
    }

    abstract static class OfCable implements FaultKind {
        @Override
        public Target target() {
            return Target.CABLE;
        }
    }

    static Cable cableIn(FaultKind.Injection injection) {
        return injection.fleet().cabling().at(injection.port()).orElseThrow(() -> new IllegalStateException("no cable in " + injection.port()));
    }

    static final class Unplug extends OfCable {
        public String name() {
            return "unplug";
        }

        public String apply(Injection injection) {
            return injection.fleet().cabling().unplug(injection.port()).map(c -> "unplugged " + c).orElse("no cable was in " + injection.port());
        }
    }

    /** A Thunderbolt 5 cable from the port to {@code peer}. */
    static final class Plug extends OfCable {
        public String name() {
            return "plug";
        }

        @Override
        public List<String> parameters() {
            return List.of("peer");
        }

        public String apply(Injection injection) {
            if (injection.step().peer() == null) {
                throw new IllegalArgumentException("fault 'plug' of " + injection.port() + " needs 'peer' (machine:port)");
            }
            Cable cable = new Cable(injection.port(), PortRef.parse(injection.step().peer()), LinkSpeed.TB5);
            injection.fleet().machine(cable.b().machine());
            injection.fleet().cabling().plug(cable);
            return "plugged " + cable;
        }
    }

    /** The cable in the port replaced by one of this speed ({@code tb4}, {@code tb5}). */
    static final class Speed extends OfCable {
        private final String name;
        private final LinkSpeed speed;

        Speed(String name, LinkSpeed speed) {
            this.name = name;
            this.speed = speed;
        }

        public String name() {
            return name;
        }

        public String apply(Injection injection) {
            return "now " + injection.fleet().cabling().replace(injection.port(), speed, false);
        }
    }

    /** The cable is seen from this port's Mac only. */
    static final class OneSided extends OfCable {
        public String name() {
            return "one-sided";
        }

        public String apply(Injection injection) {
            PortRef port = injection.port();
            Cable cable = cableIn(injection);
            injection.fleet().cabling().unplug(port);
            Cable seenFromHereOnly = cable.a().equals(port) ? new Cable(cable.a(), cable.b(), cable.speed(), true)
                    : new Cable(cable.b(), cable.a(), cable.speed(), true);
            injection.fleet().cabling().plug(seenFromHereOnly);
            return "now " + seenFromHereOnly;
        }
    }

    /** The cable links on both sides, its RDMA ports stay PORT_DOWN. */
    static final class RdmaDown extends OfCable {
        public String name() {
            return "rdma-down";
        }

        public String apply(Injection injection) {
            return "now " + injection.fleet().cabling().replace(injection.port(), cableIn(injection).speed(), false, true);
        }
    }

    /** A sound Thunderbolt 5 cable in the same ports. */
    static final class Clear extends OfCable {
        public String name() {
            return "clear";
        }

        public String apply(Injection injection) {
            return "now " + injection.fleet().cabling().replace(injection.port(), LinkSpeed.TB5, false, false);
        }
    }

    /** The cable's end moves from the port to {@code to} (a cable in the wrong port). */
    static final class Move extends OfCable {
        public String name() {
            return "move";
        }

        @Override
        public List<String> parameters() {
            return List.of("to");
        }

        public String apply(Injection injection) {
            if (injection.step().to() == null) {
                throw new IllegalArgumentException("fault 'move' of " + injection.port() + " needs 'to' (machine:port)");
            }
            return "moved to " + injection.fleet().cabling().move(injection.port(), PortRef.parse(injection.step().to()));
        }
    }
}
