package io.macfleet.inventory;

/** A cluster: the machines that together run one model with tensor (or pipeline) parallelism. */
public record Cluster(String name, String macosVersion, Topology topology, InferenceSettings inference, ClusterSupervision supervision) {

    public Cluster {
        supervision = supervision == null ? ClusterSupervision.DEFAULT : supervision;
    }

    /** A cluster with the default supervision policy. */
    public Cluster(String name, String macosVersion, Topology topology, InferenceSettings inference) {
        this(name, macosVersion, topology, inference, ClusterSupervision.DEFAULT);
    }
}
