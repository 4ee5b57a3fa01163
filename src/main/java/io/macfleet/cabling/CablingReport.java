package io.macfleet.cabling;

import java.util.List;
import java.util.Optional;

/**
 * The outcome of a cabling check: the links seen, every finding with its fix, and what the cluster can
 * do as cabled.
 *
 * @param cluster the cluster checked
 * @param machines its machines in inventory order (rank order)
 * @param links the cables between machines of the cluster
 * @param foreignAttachments what is cabled to the cluster's ports but is not a machine of the cluster
 * @param findings problems, most severe first
 * @param fullMesh every pair of machines has a confirmed Thunderbolt 5 link on RDMA-capable ports
 * @param largestMeshedSubset the largest set of machines that are fully meshed that way
 * @param ringOrder a ring through all machines over confirmed links, if there is one
 * @param verdict one sentence: what the cluster can do as cabled
 */
public record CablingReport(String cluster, List<String> machines, List<ObservedLink> links,
                            List<ObservedTopology.ForeignAttachment> foreignAttachments, List<Finding> findings,
                            boolean fullMesh, List<String> largestMeshedSubset, Optional<List<String>> ringOrder,
                            String verdict) {

    public CablingReport {
        machines = List.copyOf(machines);
        links = List.copyOf(links);
        foreignAttachments = List.copyOf(foreignAttachments);
        findings = List.copyOf(findings);
        largestMeshedSubset = List.copyOf(largestMeshedSubset);
        ringOrder = ringOrder.map(List::copyOf);
    }

    /** Fit for RDMA tensor parallelism: no finding of severity error. */
    public boolean passed() {
        return findings.stream().noneMatch(finding -> finding.severity() == Finding.Severity.ERROR);
    }

    public long count(Finding.Severity severity) {
        return findings.stream().filter(finding -> finding.severity() == severity).count();
    }
}
