package io.macfleet.supervision;

import io.macfleet.runtime.RuntimeSupervisor;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The coordinated reboot of a cluster served by a runtime other than the bundled node (llama.cpp, MLX), as the bundled
 * node's supervision does it ({@link ShellNodeControl#rebootVerifyAndStart}): every Mac's daemon disabled, every Mac
 * rebooted together, RDMA verified on each, then the daemons enabled and started in the runtime's start order.
 */
public final class RuntimeRdmaReboot {

    private RuntimeRdmaReboot() {
    }

    /** @param order the runtime's daemons in start order ({@link RuntimeSupervisor#rebootOrder()}), one per Mac */
    public static void run(String cluster, List<RuntimeSupervisor.Daemon> order, MachineShell shell, Duration commandTimeout, Duration rebootTimeout)
            throws IOException {
        Map<Integer, SupervisedCluster.Rank> byRank = new TreeMap<>();
        List<SupervisedCluster.Rank> startOrder = new ArrayList<>();
        for (RuntimeSupervisor.Daemon daemon : order) {
            SupervisedCluster.Rank rank = new SupervisedCluster.Rank(daemon.rank(), daemon.machine(), URI.create("http://" + daemon.machine() + "/"),
                    daemon.label(), io.macfleet.deployment.LaunchDaemon.LOG_DIRECTORY + daemon.label() + ".err.log");
            byRank.putIfAbsent(daemon.rank(), rank);
            startOrder.add(rank);
        }
        SupervisedCluster supervised;
        try {
            supervised = new SupervisedCluster(cluster, URI.create("http://" + cluster + "/"), new SupervisedCluster.Policy(true),
                    List.copyOf(byRank.values()));
        } catch (IllegalArgumentException e) {
            throw new IOException("cannot reboot cluster " + cluster + ": not every Mac has a daemon of its runtime installed (" + e.getMessage() + ")", e);
        }
        new ShellNodeControl(shell, commandTimeout, rebootTimeout).rebootVerifyAndStart(supervised, startOrder);
    }
}
