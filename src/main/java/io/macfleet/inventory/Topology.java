package io.macfleet.inventory;

import java.util.List;

/**
 * How the cluster's Thunderbolt 5 ports are cabled. A full mesh connects every pair of machines (2 to 6
 * machines, each Mac Studio having 6 ports); explicit lists the links and allows other shapes.
 *
 * @param links the port plan; required with {@link Kind#EXPLICIT}, optional with {@link Kind#FULL_MESH}
 */
public record Topology(Kind kind, List<Link> links) {

    /** Ports of a Mac Studio's Thunderbolt 5 receptacles are numbered 1 to this. */
    public static final int THUNDERBOLT_PORTS = 6;

    public Topology {
        links = List.copyOf(links);
    }

    public enum Kind {
        FULL_MESH("full-mesh"), EXPLICIT("explicit");

        private final String yamlName;

        Kind(String yamlName) {
            this.yamlName = yamlName;
        }

        public String yamlName() {
            return yamlName;
        }

        static Kind fromYaml(String text) {
            return "explicit".equals(text) ? EXPLICIT : FULL_MESH;
        }
    }

    /**
     * One Thunderbolt 5 cable between two machine ports (ports numbered 1 to 6): the one link type, planned in
     * the inventory, planned by the cabling check's port plan, and written {@code studio-01:2 <-> studio-03:5}.
     */
    public record Link(PortReference first, PortReference second) {

        public boolean joins(String machineA, String machineB) {
            return (first.machine().equals(machineA) && second.machine().equals(machineB))
                    || (first.machine().equals(machineB) && second.machine().equals(machineA));
        }

        public PortReference endOf(String machine) {
            return first.machine().equals(machine) ? first : second;
        }

        /**
         * Parses {@code MACHINE:PORT <-> MACHINE:PORT} (spaces optional), ports 1 to 6.
         *
         * @param source where the text came from, named in the message (e.g. "--link")
         * @throws IllegalArgumentException naming the source and the text, when it is not such a link
         */
        public static Link parse(String text, String source) {
            String[] ends = text.split("<->");
            if (ends.length != 2) {
                throw new IllegalArgumentException(source + " '" + text + "': expected MACHINE:PORT <-> MACHINE:PORT, e.g. studio-01:2 <-> studio-03:5");
            }
            return new Link(port(ends[0].strip(), text, source), port(ends[1].strip(), text, source));
        }

        private static PortReference port(String end, String text, String source) {
            int colon = end.lastIndexOf(':');
            try {
                int port = Integer.parseInt(end.substring(colon + 1));
                if (colon <= 0 || port < 1 || port > THUNDERBOLT_PORTS) {
                    throw new NumberFormatException();
                }
                return new PortReference(end.substring(0, colon), port);
            } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
                throw new IllegalArgumentException(source + " '" + text + "': '" + end + "' is not MACHINE:PORT with a port from 1 to 6");
            }
        }

        @Override
        public String toString() {
            return first + " <-> " + second;
        }
    }
}
