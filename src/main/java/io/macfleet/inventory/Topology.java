package io.macfleet.inventory;

import java.util.List;

/**
 * How the cluster's Thunderbolt 5 ports are cabled. A full mesh connects every pair of machines (2 to 6
 * machines, each Mac Studio having 6 ports); explicit lists the links and allows other shapes.
 *
 * @param links the port plan; required with {@link Kind#EXPLICIT}, optional with {@link Kind#FULL_MESH}
 */
public record Topology(Kind kind, List<Link> links) {

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

    /** One Thunderbolt 5 cable between two machine ports (ports numbered 1 to 6). */
    public record Link(Endpoint from, Endpoint to) {
        @Override
        public String toString() {
            return from + " <-> " + to;
        }
    }

    public record Endpoint(String machine, int port) {
        @Override
        public String toString() {
            return machine + ":" + port;
        }
    }
}
