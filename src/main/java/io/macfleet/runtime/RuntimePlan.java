package io.macfleet.runtime;

import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.ssh.SshTarget;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Everything a deployment of a runtime does, computed ahead and changing nothing: per Mac the files copied (with their
 * SHA-256), the directories made, and the launchd daemons written (label, arguments, environment, ports, bind
 * addresses, start order, readiness probe); the cluster's OpenAI endpoint and the probe that says it serves.
 * {@code macfleet node plan} prints it and {@code macfleet node deploy} carries out exactly this.
 */
public record RuntimePlan(String runtime, String cluster, String build, List<MachinePlan> machines, String endpoint, Probe health,
                          List<String> notes) {
    public RuntimePlan {
        machines = List.copyOf(machines);
        notes = List.copyOf(notes);
    }

    /** Where a daemon listens. */
    public record Listen(String address, int port) {
        @Override
        public String toString() {
            return address + ":" + port;
        }
    }

    /** How to tell a daemon is ready. */
    public sealed interface Probe {
        /** An HTTP GET answering 200. */
        record Http(URI uri) implements Probe {
            @Override
            public String toString() {
                return "GET " + uri + " answers 200";
            }
        }

        /** A TCP connection accepted. */
        record Tcp(String host, int port) implements Probe {
            @Override
            public String toString() {
                return "TCP connect " + host + ":" + port;
            }
        }
    }

    /** One file the deployment puts on a Mac. */
    public record StagedFile(String destination, Source source, Optional<String> sha256, long size, int mode) {
        public sealed interface Source {
            /** A file of this host, copied unchanged (resumable, checked by the Mac's shasum). */
            record LocalFile(Path path) implements Source {
            }

            /** A secret, resolved at deployment from its reference and never shown. */
            record Secret(String reference) implements Source {
            }

            /** A small file written from this text (an MLX device or host file): shown in the plan as it is. */
            record Content(String text) implements Source {
            }
        }
    }

    /** One launchd daemon: its definition, the order it starts in (lower first), where it listens, how it is ready. */
    public record DaemonPlan(LaunchDaemon daemon, int startOrder, List<Listen> listens, Probe readiness) {
        public DaemonPlan {
            listens = List.copyOf(listens);
        }
    }

    /** What happens on one Mac. */
    public record MachinePlan(String machine, int rank, String role, SshTarget ssh, List<String> directories, List<StagedFile> files,
                              List<DaemonPlan> daemons) {
        public MachinePlan {
            directories = List.copyOf(directories);
            files = List.copyOf(files);
            daemons = List.copyOf(daemons);
        }
    }

    public MachinePlan machine(String name) {
        return machines.stream().filter(machine -> machine.machine().equals(name)).findFirst().orElseThrow();
    }

    /** The start orders in use, lowest first: the switch starts every daemon of one order before the next. */
    public List<Integer> startOrders() {
        return machines.stream().flatMap(machine -> machine.daemons().stream()).map(DaemonPlan::startOrder).distinct().sorted().toList();
    }
}
