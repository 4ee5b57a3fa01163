package io.macfleet.provision;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Where the machines of one cluster meet for a cluster-scoped step. */
final class Rendezvous {
    interface ClusterWork {
        ClusterResult run(List<MachineContext> arrived, List<String> missing);
    }

    private final Set<String> expected;
    private final Map<String, MachineContext> arrived = new LinkedHashMap<>();
    private final Set<String> departed = new java.util.HashSet<>();
    private boolean working;
    private ClusterResult result;

    Rendezvous(Set<String> expected) {
        this.expected = expected;
    }

    ClusterResult arrive(MachineContext context, ClusterWork work) {
        List<MachineContext> present;
        List<String> missing;
        synchronized (this) {
            arrived.put(context.machine(), context);
            notifyAll();
            while (arrived.size() + departed.size() < expected.size()) {
                waitHere();
            }
            if (working || result != null) {
                while (result == null) {
                    waitHere();
                }
                return result;
            }
            working = true;
            present = List.copyOf(arrived.values());
            missing = expected.stream().filter(name -> !arrived.containsKey(name)).sorted().toList();
        }
        ClusterResult computed;
        try {
            computed = work.run(present, missing);
        } catch (RuntimeException e) {
            computed = new ClusterResult(false, false, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        synchronized (this) {
            result = computed;
            notifyAll();
        }
        return computed;
    }

    synchronized void depart(String machine) {
        if (!arrived.containsKey(machine)) {
            departed.add(machine);
            notifyAll();
        }
    }

    private void waitHere() {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StepFailedException("interrupted while waiting for the other machines of the cluster");
        }
    }

    /** What a cluster-scoped step came to, once for all machines of the cluster: whether it holds, and whether it acted. */
    record ClusterResult(boolean satisfied, boolean acted, String detail) {
    }

    /** The check of a cluster step; when it fails and the step can act, the action once for the cluster and the check again. */
    static ClusterResult clusterStep(StepDefinition definition, ClusterMeeting meeting) {
        CheckResult check = definition.checkCluster(meeting);
        if (check.satisfied() || !definition.hasAction()) {
            return new ClusterResult(check.satisfied(), false, check.detail());
        }
        String done;
        try {
            done = definition.actCluster(meeting);
        } catch (StepFailedException e) {
            return new ClusterResult(false, true, e.getMessage());
        }
        if (!definition.verifyAfterAction()) {
            return new ClusterResult(true, true, done);
        }
        CheckResult after = definition.checkCluster(meeting);
        return new ClusterResult(after.satisfied(), true, after.satisfied() ? done : "the action ran (" + done + ") but the check still fails: " + after.detail());
    }
}
