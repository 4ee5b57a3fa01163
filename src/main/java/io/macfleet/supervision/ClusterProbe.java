package io.macfleet.supervision;

/** Takes one look at every rank of a cluster. {@link NodeProbe} does it over HTTP and SSH. */
@FunctionalInterface
public interface ClusterProbe {
    ClusterObservation observe(SupervisedCluster cluster);
}
