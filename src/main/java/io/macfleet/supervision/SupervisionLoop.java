package io.macfleet.supervision;

import io.macfleet.lease.Leases;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jboss.logging.Logger;

/**
 * One round of supervision over the deployed clusters: for each, this instance takes (or keeps) the lease
 * {@code supervise:CLUSTER}; a cluster whose lease another {@code macfleet serve} holds is left to it. Only the
 * holder looks and acts, and it checks the lease is still held after looking and before acting, so two instances
 * never order the same restart or reboot.
 * <p>
 * The clusters are looked at all at once, one virtual thread each: a cluster whose machines hang costs the round its
 * own probe timeouts once, not once per cluster in turn, and a look that fails is that cluster's problem alone.
 */
public final class SupervisionLoop {

    private static final Logger LOG = Logger.getLogger(SupervisionLoop.class);

    private final Leases leases;
    private final ClusterProbe probe;
    private final ClusterSupervisor supervisor;
    private final Map<String, Leases.Lease> held = new HashMap<>();

    public SupervisionLoop(Leases leases, ClusterProbe probe, ClusterSupervisor supervisor) {
        this.leases = leases;
        this.probe = probe;
        this.supervisor = supervisor;
    }

    public static String leaseKey(String cluster) {
        return "supervise:" + cluster;
    }

    /** Looks at every cluster this instance may supervise; returns the status of those it did. */
    public synchronized List<ClusterStatus> round(List<SupervisedCluster> clusters) {
        Map<SupervisedCluster, Leases.Lease> mine = new LinkedHashMap<>();
        for (SupervisedCluster cluster : clusters) {
            Optional<Leases.Lease> lease = leases.tryAcquire(leaseKey(cluster.name()));
            if (lease.isEmpty()) {
                release(cluster.name());
                continue;
            }
            held.put(cluster.name(), lease.get());
            mine.put(cluster, lease.get());
        }
        Map<SupervisedCluster, Future<ClusterObservation>> looks = new LinkedHashMap<>();
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            mine.keySet().forEach(cluster -> looks.put(cluster, executor.submit(() -> probe.observe(cluster))));
        }
        List<ClusterStatus> statuses = new ArrayList<>();
        for (Map.Entry<SupervisedCluster, Future<ClusterObservation>> look : looks.entrySet()) {
            SupervisedCluster cluster = look.getKey();
            ClusterObservation observation;
            try {
                observation = look.getValue().get();
            } catch (ExecutionException e) {
                LOG.warnf("cluster %s: the supervisor's look failed: %s", cluster.name(), e.getCause().toString());
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (!mine.get(cluster).held()) {
                release(cluster.name());
                continue;
            }
            statuses.add(supervisor.observe(observation));
        }
        List<String> gone = held.keySet().stream().filter(name -> clusters.stream().noneMatch(c -> c.name().equals(name))).toList();
        gone.forEach(this::release);
        return statuses;
    }

    /** Gives up every lease (service shutdown), so another instance takes over at once. */
    public synchronized void close() {
        List.copyOf(held.keySet()).forEach(this::release);
    }

    private void release(String cluster) {
        Leases.Lease lease = held.remove(cluster);
        supervisor.forget(cluster);
        if (lease != null) {
            lease.close();
        }
    }
}
