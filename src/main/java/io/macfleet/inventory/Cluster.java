package io.macfleet.inventory;

/** A cluster: the machines that together run one model with tensor (or pipeline) parallelism. */
public record Cluster(String name, String macosVersion, Topology topology, InferenceSettings inference) {
}
