package io.macfleet.cabling;

import io.macfleet.command.JsonOption;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.inventory.Topology;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code macfleet cabling}: plan, check and turn a cluster's Thunderbolt cabling into engine configuration.
 */
@Command(name = "cabling", mixinStandardHelpOptions = true,
        description = "Plan and check the Thunderbolt 5 mesh of a cluster; generate MLX and macfleet peer configuration from it.",
        subcommands = {CablingCommand.Plan.class, CablingCommand.Check.class, CablingCommand.Config.class})
public class CablingCommand {

    /** Options shared by the commands that read captured command output. */
    static class CaptureOptions {
        @Option(names = "--from", required = true, paramLabel = "DIR",
                description = "Directory of captured command output, one subdirectory per machine (see README: offline cabling check).")
        Path from;

        @Option(names = "--cluster", defaultValue = "cluster", description = "Name of the cluster in the output (default: ${DEFAULT-VALUE}).")
        String cluster;

        @Option(names = "--machines", split = ",", paramLabel = "NAME",
                description = "Machines of the cluster in rank order (default: every subdirectory of DIR, in name order).")
        List<String> machines;

        @Option(names = "--target-version", paramLabel = "VERSION", description = "The cluster's target macOS version, e.g. 26.2.")
        String targetVersion;

        @Option(names = "--link", paramLabel = "A:PORT<->B:PORT",
                description = "A planned cable, e.g. 'studio-01:2<->studio-03:5'; repeat for each. With --explicit only these cables are planned; otherwise they pin ports of a full mesh.")
        List<String> links = new ArrayList<>();

        @Option(names = "--explicit", description = "The planned topology is exactly the --link cables, not a full mesh.")
        boolean explicit;

        List<MachineCablingFacts> facts() {
            return CaptureDirectory.read(from);
        }

        CablingReport check(List<MachineCablingFacts> facts) {
            List<String> order = machines != null && !machines.isEmpty() ? machines : facts.stream().map(MachineCablingFacts::machine).toList();
            List<Topology.Link> planned = links.stream().map(link -> Topology.Link.parse(link, "--link")).toList();
            PlannedTopology plan = new PlannedTopology(cluster, order, explicit ? PlannedTopology.Kind.EXPLICIT : PlannedTopology.Kind.FULL_MESH, planned);
            return CablingCheck.check(plan, facts, Optional.ofNullable(targetVersion));
        }
    }

    /**
     * Options of the live mode: --refresh, and the SSH options of every command that reaches machines (inherited:
     * picocli allows no mixin inside an argument group), used with --refresh.
     */
    static class LiveOptions extends io.macfleet.ssh.SshOptions {
        @Option(names = "--refresh", description = "Gather fresh facts of the cluster's machines over SSH first.")
        boolean refresh;
    }

    /** Where check and config take the cluster from: captured output (offline) or a cluster of the applied inventory (live). */
    static class ClusterSource {
        @picocli.CommandLine.ArgGroup(exclusive = false, multiplicity = "0..1", heading = "Offline mode:%n")
        CaptureOptions capture;

        @Parameters(arity = "0..1", paramLabel = "CLUSTER", description = "Live mode: a cluster of the applied inventory, checked from the stored facts of its machines.")
        String inventoryCluster;

        @picocli.CommandLine.ArgGroup(exclusive = false, multiplicity = "0..1", heading = "Live mode:%n")
        LiveOptions liveOptions;
    }

    /**
     * The facts and the report, from captures (offline) or from the inventory and stored facts (live). Unreadable
     * captures, unknown clusters and a refused configuration are CommandFailures, reported by the CLI's one handler.
     */
    record Source(List<MachineCablingFacts> facts, CablingReport report, List<String> notes) {
        Source(List<MachineCablingFacts> facts, CablingReport report) {
            this(facts, report, List.of());
        }
    }

    static Source source(String inventoryCluster, CaptureOptions capture, LiveOptions liveOptions, ClusterCabling live) {
        if ((inventoryCluster == null) == (capture == null)) {
            throw new IllegalArgumentException("give a CLUSTER of the applied inventory (live mode) or --from DIR (offline mode), one of them");
        }
        if (capture != null) {
            List<MachineCablingFacts> facts = capture.facts();
            return new Source(facts, capture.check(facts));
        }
        if (liveOptions != null && liveOptions.refresh) {
            ClusterCabling.Refreshed refreshed = live.refreshed(inventoryCluster, liveOptions.settings(Actors.commandLine()));
            return new Source(refreshed.cluster().facts(), refreshed.cluster().check(), refreshed.notes());
        }
        ClusterCabling.Cluster cluster = live.cluster(inventoryCluster, Optional.empty());
        return new Source(cluster.facts(), cluster.check());
    }

    static void write(Path file, String content) {
        try {
            Files.writeString(file, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write " + file + ": " + e.getMessage());
        }
    }

    @Command(name = "plan", mixinStandardHelpOptions = true,
            description = "Propose a port plan for a full mesh and print it as a cabling sheet (text, or SVG with --svg).")
    static class Plan implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(arity = "0..1", paramLabel = "CLUSTER", description = "A cluster of the applied inventory: its machines, coordinator first.")
        String inventoryCluster;

        @Option(names = "--machines", split = ",", paramLabel = "NAME", description = "The machines to mesh (2 to 6), instead of CLUSTER.")
        List<String> machines;

        @Option(names = "--cluster", defaultValue = "cluster", description = "Name of the cluster with --machines (default: ${DEFAULT-VALUE}).")
        String cluster;

        @Inject
        ClusterCabling live;

        @Option(names = "--svg", paramLabel = "FILE", description = "Also write the plan as an SVG diagram.")
        Path svg;

        @Override
        public Integer call() {
            PortPlan plan;
            try {
                if ((inventoryCluster == null) == (machines == null || machines.isEmpty())) {
                    throw new IllegalArgumentException("give a CLUSTER of the applied inventory or --machines, one of them");
                }
                if (inventoryCluster != null) {
                    cluster = inventoryCluster;
                    machines = live.plan(inventoryCluster).machines();
                }
                plan = PortPlan.fullMesh(cluster, machines);
            } catch (IllegalArgumentException e) {
                throw CommandException.usage(e.getMessage());
            }
            spec.commandLine().getOut().print(plan.toText());
            spec.commandLine().getOut().flush();
            if (svg != null) {
                try {
                    write(svg, CablingSvg.renderPlan(cluster, machines, plan.cables()));
                } catch (IllegalArgumentException e) {
                    throw CommandException.usage(e.getMessage());
                }
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true,
            description = {"Check a cluster's cabling and say exactly what to fix. Exit 0 only when the cluster is fit for RDMA tensor parallelism.",
                    "Live: `check CLUSTER [--refresh]` (plan from the applied inventory, observed mesh from the stored facts). Offline: `check --from DIR`."},
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:fit for RDMA tensor parallelism", "1:error findings", "2:unusable input (unknown cluster, unreadable captures)"})
    static class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @picocli.CommandLine.Mixin
        ClusterSource cluster;

        @Inject
        ClusterCabling live;

        @Mixin
        JsonOption json;

        @Option(names = "--svg", paramLabel = "FILE", description = "Also write the diagram as SVG.")
        Path svg;

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            CablingReport report;
            try {
                Source source = source(cluster.inventoryCluster, cluster.capture, cluster.liveOptions, live);
                report = source.report();
                source.notes().forEach(note -> err.println("macfleet cabling check: " + note));
                if (svg != null) {
                    write(svg, CablingSvg.render(report));
                }
            } catch (IllegalArgumentException e) {
                throw CommandException.usage(e.getMessage());
            }
            spec.commandLine().getOut().print(json.on() ? CablingText.json(report) : CablingText.text(report));
            // print() does not flush picocli's writer (only println does): without this the report could be lost at exit.
            spec.commandLine().getOut().flush();
            if (!report.passed()) {
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "config", mixinStandardHelpOptions = true,
            description = "Generate engine peer configuration from the checked cabling: an MLX hostfile (jaccl or ring) or macfleet's node cluster configuration.")
    static class Config implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @picocli.CommandLine.Mixin
        ClusterSource cluster;

        @Inject
        ClusterCabling live;

        @Option(names = "--format", required = true, paramLabel = "FORMAT",
                description = "mlx-jaccl (mlx.launch --backend jaccl), mlx-ring (mlx.launch --backend ring) or macfleet (schemas/node-cluster.schema.json).")
        String format;

        @Option(names = "--env", paramLabel = "NAME=VALUE", description = "Environment for the MLX processes (e.g. MLX_METAL_FAST_SYNCH=1); repeatable.")
        List<String> envs = new ArrayList<>();

        @Option(names = "--force", description = "Emit even though the cabling check fails.")
        boolean force;

        @Option(names = "--output", paramLabel = "FILE", description = "Write to FILE instead of standard output.")
        Path output;

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            EngineConfigurations.Format chosen;
            try {
                chosen = EngineConfigurations.Format.valueOf(format.toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw CommandException.usage("unknown --format '" + format + "'; expected mlx-jaccl, mlx-ring or macfleet");
            }
            for (String env : envs) {
                if (!env.matches("[A-Za-z_][A-Za-z0-9_]*=.*")) {
                    throw CommandException.usage("--env '" + env + "' is not NAME=VALUE");
                }
            }
            try {
                Source source = source(cluster.inventoryCluster, cluster.capture, cluster.liveOptions, live);
                String document = EngineConfigurations.render(chosen, source.report(), source.facts(), envs, force);
                err.print(EngineConfigurations.networkAssumptions(chosen, source.report(), source.facts()));
                err.flush();
                if (output != null) {
                    write(output, document);
                } else {
                    spec.commandLine().getOut().print(document);
                    spec.commandLine().getOut().flush();
                }
                return ExitCodes.OK;
            } catch (IllegalArgumentException e) {
                throw CommandException.usage(e.getMessage());
            }
        }
    }
}
