package io.macfleet.runtime;

import io.macfleet.runtime.RuntimePlan.MachinePlan;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An inference engine macfleet deploys and supervises on a cluster's Macs. A runtime only describes: from a cluster
 * (machines in rank order, their memory and Thunderbolt addresses, the inventory's settings) it computes a
 * {@link RuntimePlan} (files to copy, launchd daemons with their arguments, environment, ports and bind addresses,
 * readiness probes, the OpenAI endpoint), changing nothing; {@link RuntimeDeployer} carries a plan out and
 * {@link RuntimeProbe} looks at what runs. Adding a runtime is a class implementing this, its settings schema
 * {@code schemas/runtimes/NAME.schema.json}, and its registration in {@link InferenceRuntimes}.
 */
public interface InferenceRuntime {

    /** What the inventory's {@code inference.runtime} names (its settings schema is {@code schemas/runtimes/NAME.schema.json}). */
    String name();

    /** One line for people: what this runtime is. */
    String description();

    /** The deployment this cluster needs; throws {@link RuntimeRefused} naming what is wrong (nothing has changed then). */
    RuntimePlan plan(RuntimeCluster cluster);

    /** Every launchd label this runtime may install on a Mac: a switch to another runtime boots these out. */
    List<String> labels();

    /** The order an ordered restart starts the labels in (the default: as {@link #labels()} lists them). */
    default List<String> startOrder() {
        return labels();
    }

    /**
     * The command that prints the installed build on one Mac of a plan (argv, absolute program first), or empty when
     * the runtime's version is read otherwise (the bundled node: from its daemon's environment).
     */
    default List<String> versionCommand(MachinePlan machine) {
        return List.of();
    }

    /**
     * The command that prints the build an installed daemon of this runtime runs (argv, absolute program first), read
     * from its definition on the Mac: what an upgrade reports as the build it replaces. Empty for a daemon whose build is
     * read otherwise.
     */
    default Optional<List<String>> versionCommand(io.macfleet.deployment.LaunchDaemon installed) {
        return Optional.empty();
    }

    /**
     * Commands run on one Mac after its files are staged and before its build is read back (argv each, absolute program
     * first, as the SSH user): e.g. MLX's virtual environment and its pinned packages. Each must be idempotent.
     */
    default List<List<String>> installCommands(MachinePlan machine) {
        return List.of();
    }

    /**
     * The directory {@link #installCommands} build as the SSH user (MLX's venv), given to root:wheel once its build was
     * read back, so the SSH user cannot change what the daemon runs; a directory already root's is taken as built.
     */
    default Optional<String> builtDirectory(MachinePlan machine) {
        return Optional.empty();
    }

    /** Directories the daemons write (a cache), owned by the daemon account; every other directory of the plan is root's. */
    default List<String> writableDirectories(MachinePlan machine) {
        return List.of();
    }

    /** The build a version command printed (standard output and error together), or empty when unreadable. */
    default Optional<String> build(String versionOutput) {
        return Optional.empty();
    }

    /** Log lines that mean the RDMA transport failed (the supervisor counts them only since the daemon's last start). */
    default List<Pattern> rdmaFaultLines() {
        return List.of();
    }

    /**
     * The line a daemon of this label writes when it starts (the supervisor reads its RDMA faults only after the last
     * one), or empty when it writes none that can be told (then the end of its log counts).
     */
    default Optional<Pattern> startLine(String label) {
        return Optional.empty();
    }

    /** How to tell an installed daemon of this runtime is ready, read from its definition on the Mac (for status and supervision). */
    default Optional<RuntimePlan.Probe> probe(io.macfleet.deployment.LaunchDaemon installed) {
        return Optional.empty();
    }

    /**
     * For a daemon that ends one link between Macs: which transport that link uses, from the daemon's log lines since it
     * last started (e.g. "rdma", "tcp (fallback)"); empty when the daemon ends no such link or the log does not say.
     */
    default Optional<String> transport(String label, String log) {
        return Optional.empty();
    }

    /**
     * Where this runtime's Prometheus metrics are: a path on the server of its OpenAI endpoint (e.g. {@code /metrics}),
     * fetched with the endpoint's API key when the cluster has one; empty when the runtime exports none.
     */
    default java.util.Optional<String> metricsPath() {
        return java.util.Optional.empty();
    }

    /** One scrape of {@link #metricsPath()} in macfleet's terms (what the runtime does not measure stays empty). */
    default InferenceCounters inferenceCounters(PrometheusText scraped) {
        return InferenceCounters.NONE;
    }
}
