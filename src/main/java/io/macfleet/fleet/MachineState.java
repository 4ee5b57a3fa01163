package io.macfleet.fleet;

import io.macfleet.cabling.CablingReport;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsObservation;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.Machine;
import io.macfleet.facts.Reachability;
import io.macfleet.provision.RunView;
import io.macfleet.supervision.RankObservation;
import io.macfleet.supervision.SharedStatus;
import java.time.Instant;
import java.util.Optional;

/**
 * What the console knows about one machine at one moment: the input of every {@link StatusColumn}.
 *
 * @param machine its entry in the applied inventory
 * @param cluster its cluster, empty when it is in none
 * @param observation its latest facts with their command output, empty when never gathered
 * @param drift the inventory compared with those facts (reports missing facts as such)
 * @param cabling the cabling check of its cluster, empty when it is in none
 * @param provisioning where it stands in the newest provisioning run that included it, empty when none did
 * @param now when the fleet state was read
 * @param reachability when it last answered, since when it does not, the last error; empty when never tried
 * @param node the inference node of its cluster as far as macfleet knows it (never deployed: no deployment)
 */
public record MachineState(Machine machine, Optional<Cluster> cluster, Optional<FactsObservation> observation, Drift.Report drift,
                           Optional<CablingReport> cabling, Optional<RunView.MachineProgress> provisioning, Instant now,
                           Optional<Reachability> reachability, Node node) {

    /**
     * The inference node on one machine: its cluster's latest deployment and the supervisor's latest look at the rank
     * this machine runs.
     *
     * @param deployment the cluster's latest deployment, empty when macfleet never deployed the node to it
     * @param rank what the cluster's supervisor saw of the machine's rank, empty when it has not looked (yet)
     * @param observedAt when it looked
     * @param status the cluster's shared supervision status: which instance looked, whether that look is stale, or
     *               that the stored status cannot be read; empty when the look is presented as current without it
     */
    public record Node(Optional<NodeDeploymentStore.Deployment> deployment, Optional<RankObservation> rank, Optional<Instant> observedAt,
                       Optional<SharedStatus> status) {
        public static final Node NEVER_DEPLOYED = new Node(Optional.empty(), Optional.empty(), Optional.empty());

        public Node(Optional<NodeDeploymentStore.Deployment> deployment, Optional<RankObservation> rank, Optional<Instant> observedAt) {
            this(deployment, rank, observedAt, Optional.empty());
        }
    }

    /** Without a record of reaching it (states built before the observation loop existed, tests). */
    public MachineState(Machine machine, Optional<Cluster> cluster, Optional<FactsObservation> observation, Drift.Report drift,
                        Optional<CablingReport> cabling, Optional<RunView.MachineProgress> provisioning, Instant now) {
        this(machine, cluster, observation, drift, cabling, provisioning, now, Optional.empty(), Node.NEVER_DEPLOYED);
    }

    public String name() {
        return machine.name();
    }

    /** The macOS version its cluster targets, if it is in a cluster. */
    public Optional<String> targetMacos() {
        return cluster.map(Cluster::macosVersion);
    }
}
