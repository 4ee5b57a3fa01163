package io.macfleet.console.columns;

import io.macfleet.console.Ages;
import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.supervision.RankObservation;
import io.macfleet.supervision.SharedStatus;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The inference node's rank on the machine: its cluster's latest deployment and what the supervisor last saw of the
 * rank (its /health answer), whichever {@code macfleet serve} instance supervises the cluster. A look older than the
 * staleness window is shown as "last seen", a warning, never as the current state. A rank that does not serve is a
 * problem of its machine, but it does not make the machine "not ready": ready means ready to run the node, and the
 * supervisor acts on the node itself.
 */
@ApplicationScoped
public class InferenceColumn implements StatusColumn {

    @Override
    public String name() {
        return "Inference";
    }

    @Override
    public String title() {
        return "Inference node";
    }

    @Override
    public int order() {
        return 700;
    }

    @Override
    public Status cell(MachineState machine) {
        MachineState.Node node = machine.node();
        if (node.deployment().isEmpty()) {
            return Status.none("not deployed", machine.cluster().isEmpty()
                    ? machine.name() + " is in no cluster, so no inference node runs on it"
                    : "macfleet has not deployed the inference node to cluster " + machine.cluster().get().name());
        }
        NodeDeploymentStore.Deployment deployment = node.deployment().get();
        String release = "deployment " + deployment.id() + ": node " + deployment.nodeVersion() + ", model "
                + deployment.modelFileName();
        if (!deployment.finished()) {
            return Status.warning("deploying", release + ", " + deployment.phase() + " since " + Ages.utc(deployment.updatedAt()));
        }
        if (deployment.phase().equals("failed")) {
            return Status.problem("deploy failed", release + " failed" + message(deployment));
        }
        if (node.status().orElse(null) instanceof SharedStatus.Unreadable unreadable) {
            return Status.warning("unreadable status", release + "; the supervisor's " + unreadable.explain());
        }
        if (node.rank().isEmpty()) {
            return Status.ok("deployed", release + "; no supervisor has looked at the rank yet");
        }
        RankObservation rank = node.rank().get();
        String health = "; /health " + (rank.healthDetail().isBlank() ? "answered" : rank.healthDetail());
        if (node.status().filter(SharedStatus::stale).isPresent()) {
            // Its supervisor stopped looking: the last state seen, never presented as the current one.
            SharedStatus stale = node.status().get();
            return Status.warning("rank " + rank.rank() + " last seen " + word(rank.health()), release + "; " + stale.lastSeen() + " ("
                    + Ages.ago(stale.observedAt(), machine.now()) + "), no look since" + health);
        }
        String seen = health + node.observedAt().map(at -> " (" + Ages.ago(at, machine.now()) + ", " + Ages.utc(at) + ")").orElse("")
                + node.status().map(status -> ", seen by " + status.observedBy()).orElse("");
        String label = "rank " + rank.rank() + " " + word(rank.health());
        return switch (rank.health()) {
            case SERVING -> Status.ok(label, release + seen);
            case STARTING -> Status.warning(label, release + seen);
            case DEGRADED, UNREACHABLE -> Status.problem(label, release + seen);
        };
    }

    @Override
    public boolean blocksReadiness(Status cell) {
        return false;
    }

    private static String word(RankObservation.Health health) {
        return switch (health) {
            case SERVING -> "serving";
            case STARTING -> "starting";
            case DEGRADED -> "degraded";
            case UNREACHABLE -> "down";
        };
    }

    private static String message(NodeDeploymentStore.Deployment deployment) {
        return deployment.message() == null || deployment.message().isBlank() ? "" : ": " + deployment.message();
    }
}
