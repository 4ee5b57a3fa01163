package io.macfleet.provision;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import java.util.List;

/**
 * What a step of cluster scope sees when it runs: the cluster, the machines of the run that got to the step, those
 * that stopped on the way, and the fleet's cabling and facts.
 */
public record ClusterMeeting(String cluster, List<MachineContext> arrived, List<String> missing, ClusterCabling cabling, FactsService facts) {

    public ClusterMeeting {
        arrived = List.copyOf(arrived);
        missing = List.copyOf(missing);
    }
}
