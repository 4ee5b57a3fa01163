package io.macfleet.supervision;

import io.macfleet.deployment.Launchctl;
import io.macfleet.deployment.RemoteShell;
import io.macfleet.facts.SystemOutputParsers;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.PrivilegedProgram;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Restarts and reboots over SSH with the programs of the sudo allow-list: {@code launchctl kickstart -k} per rank,
 * rank 0 first (the others connect to lower ranks); for RDMA, the node's daemon is disabled so it does not start at
 * boot, every machine restarts ({@code shutdown -r now}), and only when every machine is back with RDMA answering
 * and an active Thunderbolt port is the daemon enabled and bootstrapped again, in rank order.
 */
public final class ShellNodeControl implements ClusterSupervisor.Control {

    private final MachineShell shell;
    private final Duration commandTimeout;
    private final Duration rebootTimeout;

    public ShellNodeControl(MachineShell shell, Duration commandTimeout, Duration rebootTimeout) {
        this.shell = shell;
        this.commandTimeout = commandTimeout;
        this.rebootTimeout = rebootTimeout;
    }

    @Override
    public void restartInOrder(SupervisedCluster cluster) throws IOException {
        for (SupervisedCluster.Rank rank : cluster.ranks()) {
            RemoteShell.Answer answer = run(rank.machine(), Command.sudo(PrivilegedProgram.LAUNCHCTL, "kickstart", "-k", "system/" + rank.daemonLabel()));
            if (answer.exitStatus() != 0) {
                throw new IOException("rank " + rank.rank() + " (" + rank.machine() + "): launchctl kickstart -k system/"
                        + rank.daemonLabel() + " exited " + answer.exitStatus() + ": " + answer.stderr().strip());
            }
        }
    }

    @Override
    public void rebootVerifyAndStart(SupervisedCluster cluster) throws IOException {
        rebootVerifyAndStart(cluster, cluster.ranks());
    }

    /**
     * The same, starting the daemons in {@code startOrder} (a runtime with several kinds of daemon: llama.cpp's rpc-servers
     * before the head that connects to them), each entry a daemon of a machine of the cluster.
     */
    public void rebootVerifyAndStart(SupervisedCluster cluster, List<SupervisedCluster.Rank> startOrder) throws IOException {
        for (SupervisedCluster.Rank rank : cluster.ranks()) {
            // Keeps the node from starting at boot before RDMA is verified (and crashing again on a bad link).
            requireSuccess(rank, run(rank.machine(), Command.sudo(PrivilegedProgram.LAUNCHCTL, "disable", "system/" + rank.daemonLabel())), "launchctl disable");
        }
        // A Mac keeps answering over SSH for a while after `shutdown -r now` (longer on a loaded machine): what answers
        // then is the old, wedged system. A machine counts as rebooted once it was seen unreachable, or once its uptime
        // is below what it was when the reboot was ordered (uptime only grows within one boot).
        Map<String, Duration> uptimeBefore = new HashMap<>();
        Set<String> rebooted = new HashSet<>();
        for (SupervisedCluster.Rank rank : cluster.ranks()) {
            if (uptime(rank.machine()) instanceof Uptime.SinceBoot(Duration sinceBoot) && sinceBoot.isPositive()) {
                uptimeBefore.put(rank.machine(), sinceBoot);
            }
            try {
                run(rank.machine(), Command.sudo(PrivilegedProgram.SHUTDOWN, "-r", "now"));
            } catch (IOException e) {
                // The connection may drop as the machine goes down: the reboot was still ordered.
            }
        }
        long deadline = System.nanoTime() + rebootTimeout.toNanos();
        List<String> waiting = new ArrayList<>(cluster.ranks().stream().map(SupervisedCluster.Rank::machine).distinct().toList());
        sleep(Duration.ofSeconds(1));
        List<String> problems = new ArrayList<>();
        while (!waiting.isEmpty()) {
            for (String machine : List.copyOf(waiting)) {
                if (!rebooted.contains(machine)) {
                    Uptime uptime = uptime(machine);
                    Duration before = uptimeBefore.get(machine);
                    boolean newBoot = switch (uptime) {
                        // Seen down: whatever answers next is a new boot.
                        case Uptime.Unreachable unreachable -> true;
                        // Cannot tell: the verification that follows decides whether it is back and right.
                        case Uptime.Unreadable unreadable -> true;
                        // Uptime only grows within one boot; with none read before the order there is nothing to compare.
                        case Uptime.SinceBoot(Duration sinceBoot) -> before == null || sinceBoot.compareTo(before) < 0;
                    };
                    if (newBoot) {
                        rebooted.add(machine);
                    }
                    if (uptime instanceof Uptime.Unreachable || !newBoot) {
                        continue;
                    }
                }
                String problem = verify(machine);
                if (problem == null) {
                    waiting.remove(machine);
                } else if (problem.startsWith("!")) {
                    // Back, but RDMA or the cabling is wrong: waiting longer will not fix it.
                    waiting.remove(machine);
                    problems.add(problem.substring(1));
                }
            }
            if (!waiting.isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("not back within " + rebootTimeout.toSeconds() + " s after the reboot: " + waiting);
                }
                sleep(Duration.ofMillis(500));
            }
        }
        if (!problems.isEmpty()) {
            throw new IOException(String.join("; ", problems) + " (the node stays disabled)");
        }
        for (SupervisedCluster.Rank rank : startOrder) {
            try {
                Launchctl.enableAndBootstrap(command -> run(rank.machine(), command), rank.daemonLabel());
            } catch (Launchctl.Refused e) {
                throw new IOException("rank " + rank.rank() + " (" + rank.machine() + "): " + e.getMessage(), e);
            }
        }
    }

    /** Null when the machine is back and RDMA answers; "!..." when it is back and wrong; otherwise still booting. */
    private String verify(String machine) {
        RemoteShell.Answer status;
        try {
            status = run(machine, Command.reading("rdma_ctl", "status"));
        } catch (IOException e) {
            return "not back yet";
        }
        if (!status.stdout().strip().equals("enabled")) {
            return null;
        }
        try {
            RemoteShell.Answer devinfo = shell.run(machine, Command.reading("ibv_devinfo"), commandTimeout);
            if (devinfo.exitStatus() != 0 || !devinfo.stdout().contains("hca_id:")) {
                return "!" + machine + ": ibv_devinfo lists no RDMA device after the reboot";
            }
            if (!devinfo.stdout().contains("PORT_ACTIVE")) {
                return "!" + machine + ": no active Thunderbolt RDMA port after the reboot (check the cables)";
            }
            return null;
        } catch (MachineShell.TimedOut e) {
            return "!" + machine + ": ibv_devinfo still does not answer after the reboot";
        } catch (IOException e) {
            return "not back yet";
        }
    }

    /** What {@code uptime} told about a machine. */
    private sealed interface Uptime {
        /** Its time since boot. */
        record SinceBoot(Duration duration) implements Uptime {
        }

        /** It answered, but not with an uptime that can be read (a failed command, output not understood). */
        record Unreadable() implements Uptime {
        }

        /** It did not answer over SSH: down, or on its way down or up. */
        record Unreachable() implements Uptime {
        }
    }

    private Uptime uptime(String machine) {
        try {
            RemoteShell.Answer answer = run(machine, Command.reading("uptime"));
            if (answer.exitStatus() != 0) {
                return new Uptime.Unreadable();
            }
            return new Uptime.SinceBoot(SystemOutputParsers.uptime(answer.stdout()));
        } catch (IOException e) {
            return new Uptime.Unreachable();
        } catch (RuntimeException e) {
            return new Uptime.Unreadable();
        }
    }

    private RemoteShell.Answer run(String machine, Command command) throws IOException {
        return shell.run(machine, command, commandTimeout);
    }

    private static void requireSuccess(SupervisedCluster.Rank rank, RemoteShell.Answer answer, String what) throws IOException {
        if (answer.exitStatus() != 0) {
            throw new IOException("rank " + rank.rank() + " (" + rank.machine() + "): " + what + " system/" + rank.daemonLabel()
                    + " exited " + answer.exitStatus() + ": " + answer.stderr().strip());
        }
    }

    private static void sleep(Duration duration) throws IOException {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the machines to reboot", e);
        }
    }
}
