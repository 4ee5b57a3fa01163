package io.macfleet.runtime;

import io.macfleet.deployment.DiskFree;
import io.macfleet.deployment.PrintingListener;
import io.macfleet.deployment.LaunchdService;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeLayout;
import io.macfleet.deployment.NodeRankStatus;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;
import io.macfleet.deployment.RankTarget;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet node}: deploy the inference node to a cluster and run it under launchd. */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "Deploy the inference node to a cluster's Macs (launchd daemons) and start, stop, restart and watch it.",
        subcommands = {io.macfleet.runtime.RuntimePlanCommand.class, NodeCommand.Deploy.class, io.macfleet.runtime.RuntimeUpgradeCommand.class, NodeCommand.Status.class, NodeCommand.Start.class, NodeCommand.Stop.class,
                NodeCommand.Restart.class, NodeCommand.Logs.class})
public class NodeCommand {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Command(name = "deploy", mixinStandardHelpOptions = true,
            description = {"Copy the node and the model to every Mac of CLUSTER (resumable, SHA-256 verified), write each rank's"
                    + " configuration and launch daemon, then restart all ranks together. Without --model, an unfinished deployment"
                    + " of CLUSTER is taken up again, else the inventory's inference.model is deployed."},
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:serving (or nothing to do)", "1:a machine failed (nothing switched unless the message says so)", "2:bad input"})
    static class Deploy implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "CLUSTER", description = "A cluster of the applied inventory.")
        String cluster;

        @Option(names = "--model", paramLabel = "PATH|URL", description = "The GGUF model: a file on this host, or a URL each Mac downloads itself.")
        String model;

        @Option(names = "--model-sha256", paramLabel = "HEX", description = "With --model URL: the model's SHA-256, checked on every Mac.")
        String modelSha256;

        @Option(names = "--model-size", paramLabel = "BYTES", description = "With --model URL: the model's size (for the free-space check).")
        Long modelSize;

        @Option(names = "--node-jar", paramLabel = "FILE", description = "The node's jar (default: inference-node/target/inference-node-*.jar).")
        Path nodeJar;

        @Option(names = "--java-package", paramLabel = "FILE.pkg",
                description = "A Java 25+ runtime installer package, installed (installer -pkg) on Macs without Java 25 or later.")
        Path javaPackage;

        @Option(names = "--java-package-sha256", paramLabel = "HEX", description = "The package's SHA-256: checked here and on every Mac before installing.")
        String javaPackageSha256;

        @Option(names = "--dry-run", description = "Print the plan (ranks, ports, files, the cluster file) without touching any Mac.")
        boolean dryRun;

        @Mixin
        SshOptions ssh;

        @Inject
        NodeService nodes;

        @Inject
        io.macfleet.runtime.RuntimeService runtimes;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            io.macfleet.runtime.InferenceRuntime runtime = runtimes.runtimeOf(cluster);
            if (!runtime.name().equals(io.macfleet.runtime.BundledRuntime.NAME)) {
                return deployRuntime(out, runtime);
            }
            NodeRelease release = nodes.release(cluster, new NodeService.Request(Optional.ofNullable(model), Optional.ofNullable(modelSha256),
                    Optional.ofNullable(modelSize), Optional.ofNullable(nodeJar)));
            NodeDeployer.Plan plan = nodes.plan(cluster, release);
            if (javaPackage != null) {
                try {
                    plan = plan.withJavaPackage(Optional.of(NodeDeployer.JavaPackage.verified(javaPackage, javaPackageSha256)));
                } catch (IllegalArgumentException | java.io.IOException e) {
                    throw CommandException.usage(e.getMessage());
                }
            }
            if (dryRun) {
                out.print(describe(plan));
                out.flush();
                return ExitCodes.OK;
            }
            SshSettings settings = settings();
            out.println("Deploying node " + release.nodeVersion() + " and " + release.modelFileName() + " to " + plan.ranks().size()
                    + " machines of " + cluster);
            out.flush();
            NodeDeployer.Outcome outcome = nodes.deploy(cluster, release, plan.javaPackage(), settings, new ProgressPrinter(out, plan));
            out.println(outcome.summary());
            out.println("Endpoint: " + outcome.endpoint());
            out.println("API key:  " + nodes.keys(cluster).apiKeyFile() + " (send it as Authorization: Bearer ...)");
            out.flush();
            return ExitCodes.OK;
        }

        private SshSettings settings() {
            try {
                return ssh.settings(Actors.commandLine());
            } catch (IllegalArgumentException e) {
                throw CommandException.usage(e.getMessage());
            }
        }

        /** A runtime other than the bundled node: its plan (node plan shows the same), carried out by RuntimeDeployer. */
        private int deployRuntime(PrintWriter out, io.macfleet.runtime.InferenceRuntime runtime) {
            if (modelSha256 != null || modelSize != null || nodeJar != null || javaPackage != null) {
                throw CommandException.usage("--model-sha256, --model-size, --node-jar and --java-package are for the"
                        + " bundled node; cluster " + cluster + " runs " + runtime.name());
            }
            if (model != null && (model.startsWith("http://") || model.startsWith("https://"))) {
                throw CommandException.usage("the " + runtime.name() + " runtime copies a model file of this host; got " + model);
            }
            Optional<Path> modelFile = Optional.ofNullable(model).map(Path::of);
            if (dryRun) {
                out.print(io.macfleet.runtime.RuntimePlans.text(runtimes.plan(cluster, modelFile, Optional.empty())));
                out.flush();
                return ExitCodes.OK;
            }
            SshSettings settings = settings();
            out.println("Deploying " + runtime.name() + " to the Macs of " + cluster);
            out.flush();
            io.macfleet.runtime.RuntimeDeployer.Outcome outcome = runtimes.deploy(cluster, modelFile, settings, PrintingListener.whenWhole(out));
            out.println(outcome.summary());
            out.println("Endpoint: " + outcome.endpoint());
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** The plan as text: what would be written where. */
    static String describe(NodeDeployer.Plan plan) {
        StringBuilder text = new StringBuilder();
        text.append("Plan for cluster ").append(plan.cluster()).append(" (").append(plan.parallelism()).append(", ")
                .append(plan.ranks().size()).append(" ranks), nothing changed:\n");
        for (RankTarget rank : plan.ranks()) {
            text.append(String.format(Locale.ROOT, "  rank %d  %-12s %-15s http %d  mesh %d%n", rank.rank(), rank.machine(),
                    rank.managementAddress(), rank.httpPort(), rank.clusterPort()));
        }
        text.append("  node:   ").append(plan.release().nodeJar()).append(" -> ").append(plan.release().jarPath()).append('\n');
        text.append("  model:  ").append(plan.release().modelFile().map(Path::toString).or(() -> plan.release().modelUrl().map(Object::toString))
                .orElseGet(() -> plan.release().modelSource() + " (held on a Mac, placed from it)"))
                .append(" -> ").append(plan.release().modelPath()).append(" (").append(DiskFree.human(plan.release().modelSize())).append(")\n");
        text.append("  daemon: ").append(NodeLayout.PLIST).append(" running ").append(String.join(" ", plan.daemon(plan.coordinator()).programArguments()))
                .append('\n');
        text.append("  endpoint: ").append(plan.endpoint()).append('\n');
        text.append("  cluster file ").append(plan.clusterFilePath()).append(":\n").append(plan.clusterFile());
        return text.toString();
    }

    /**
     * One line per machine each time its copy passes another tenth, with the overall share. Both only go forward: the
     * copies of several Macs (and a model's SFTP stripes) report from their own threads, so the share is computed and
     * printed under one lock, and a copy that starts again after a broken connection resumes a little below what it had
     * reported (its verified prefix): that is not shown as the copy going back.
     */
    public static final class ProgressPrinter implements NodeDeployer.Listener {
        private final PrintWriter out;
        private final long grandTotal;
        private final Map<String, Long> done = new HashMap<>();
        private final Map<String, Integer> shownTenth = new HashMap<>();
        private int shownOverall;

        public ProgressPrinter(PrintWriter out, NodeDeployer.Plan plan) {
            this(out, grandTotal(plan));
        }

        ProgressPrinter(PrintWriter out, long grandTotal) {
            this.out = out;
            this.grandTotal = grandTotal;
        }

        private static long grandTotal(NodeDeployer.Plan plan) {
            long perMachine = plan.release().modelSize();
            try {
                perMachine += java.nio.file.Files.size(plan.release().nodeJar());
            } catch (java.io.IOException e) {
                // counted without the jar
            }
            return perMachine * plan.ranks().size();
        }

        @Override
        public void copying(String machine, String file, long bytes, long total) {
            String key = machine + "/" + file;
            synchronized (out) {
                long furthest = done.merge(key, bytes, Math::max);
                int tenth = total == 0 ? 10 : (int) (furthest * 10 / total);
                Integer previous = shownTenth.get(key);
                if (previous != null && previous >= tenth) {
                    return;
                }
                shownTenth.put(key, tenth);
                long all = done.values().stream().mapToLong(Long::longValue).sum();
                shownOverall = Math.max(shownOverall, grandTotal == 0 ? 100 : (int) Math.min(100, all * 100 / grandTotal));
                out.printf(Locale.ROOT, "  %-12s %-5s [%-10s] %3d%%  %s of %s   overall %3d%%%n", machine, file, "#".repeat(tenth),
                        tenth * 10, DiskFree.human(furthest), DiskFree.human(total), shownOverall);
                out.flush();
            }
        }

        @Override
        public void step(String machine, String what) {
            PrintingListener.printStep(out, machine, what);
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Each rank's launchd state, pid, runs, last exit, node version and model.")
    static class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "CLUSTER", arity = "0..1", description = "A cluster of the applied inventory (default: every cluster).")
        String cluster;

        @Mixin
        JsonOption json;

        @Option(names = "--verify-files", description = "Also hash the node jar and model on every Mac and name a file that changed since the deploy"
                + " (reads the whole model).")
        boolean verifyFiles;

        @Mixin
        SshOptions ssh;

        @Inject
        NodeService nodes;

        @Inject
        io.macfleet.inventory.DesiredStateStore desiredState;

        @Inject
        io.macfleet.runtime.RuntimeService runtimes;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            SshSettings settings = ssh.settings(Actors.commandLine());
            List<String> clusters = cluster != null ? List.of(cluster)
                    : desiredState.clusters().stream().map(io.macfleet.inventory.Cluster::name).toList();
            ObjectNode document = JSON.createObjectNode();
            boolean allRunning = true;
            for (String name : clusters) {
                io.macfleet.runtime.InferenceRuntime runtime = runtimes.runtimeOf(name);
                String endpoint = runtimes.endpoint(name);
                if (!runtime.name().equals(io.macfleet.runtime.BundledRuntime.NAME)) {
                    List<io.macfleet.runtime.RuntimeService.DaemonStatus> daemons = runtimes.status(name, settings);
                    allRunning &= !daemons.isEmpty() && daemons.stream().allMatch(io.macfleet.runtime.RuntimeService.DaemonStatus::ready);
                    if (json.on()) {
                        ObjectNode cluster = document.putObject(name);
                        cluster.put("runtime", runtime.name());
                        cluster.put("endpoint", endpoint);
                        cluster.set("daemons", JSON.valueToTree(daemons.stream().map(io.macfleet.runtime.RuntimeStatusBody::of).toList()));
                    } else {
                        out.println("cluster " + name + " (runtime " + runtime.name() + "): endpoint " + endpoint);
                        out.printf(Locale.ROOT, "  %-4s %-12s %-28s %-13s %-8s %-5s %-16s %-8s %s%n", "rank", "machine", "daemon", "state", "pid", "runs",
                                "last exit", "probe", "link");
                        for (io.macfleet.runtime.RuntimeService.DaemonStatus daemon : daemons) {
                            out.printf(Locale.ROOT, "  %-4d %-12s %-28s %-13s %-8s %-5s %-16s %-8s %s%n", daemon.rank(), daemon.machine(), daemon.label(),
                                    daemon.launchd().running() ? "running" : daemon.launchd().loaded() ? daemon.launchd().state() : "not loaded",
                                    daemon.launchd().pid().isPresent() ? Long.toString(daemon.launchd().pid().getAsLong()) : "-",
                                    daemon.launchd().runs().isPresent() ? Integer.toString(daemon.launchd().runs().getAsInt()) : "-",
                                    lastExit(daemon.launchd().lastExit()), daemon.problem().isEmpty() ? "ready" : "down",
                                    daemon.error().or(daemon::transport).orElse(daemon.problem().orElse("-")));
                        }
                    }
                    continue;
                }
                List<NodeRankStatus> statuses = nodes.status(name, settings);
                allRunning &= statuses.stream().allMatch(NodeRankStatus::running);
                Map<String, List<String>> changed = verifyFiles ? nodes.changedFiles(name, settings) : Map.of();
                allRunning &= changed.values().stream().allMatch(List::isEmpty);
                if (json.on()) {
                    // The same rank object as GET /api/v1/clusters/NAME/node answers.
                    // The same rank object as GET /api/v1/clusters/NAME/node answers.
                    ObjectNode cluster = document.putObject(name);
                    cluster.put("runtime", runtime.name());
                    cluster.put("endpoint", endpoint);
                    cluster.set("ranks", JSON.valueToTree(statuses.stream().map(NodeResource.RankBody::of).toList()));
                    if (verifyFiles) {
                        cluster.set("changedFiles", JSON.valueToTree(changed));
                    }
                } else {
                    out.println("cluster " + name + " (runtime " + runtime.name() + "): endpoint " + endpoint);
                    out.printf(Locale.ROOT, "  %-4s %-12s %-13s %-8s %-5s %-16s %-28s %s%n", "rank", "machine", "state", "pid", "runs", "last exit", "node", "model");
                    for (NodeRankStatus status : statuses) {
                        out.printf(Locale.ROOT, "  %-4d %-12s %-13s %-8s %-5s %-16s %-28s %s%n", status.rank(), status.machine(), status.state(),
                                status.pid().isPresent() ? Long.toString(status.pid().getAsLong()) : "-",
                                status.runs().isPresent() ? Integer.toString(status.runs().getAsInt()) : "-",
                                lastExit(status.launchd().lastExit()),
                                status.nodeVersion().map(version -> version + " " + status.nodeSha256().map(NodeLayout::shortHash).orElse("")).orElse("-"),
                                status.error().orElse(status.modelSha256().map(NodeLayout::shortHash).orElse("-")));
                    }
                    changed.forEach((machine, files) -> files.forEach(file -> out.println("  " + machine + ": " + file)));
                    if (verifyFiles && changed.values().stream().allMatch(List::isEmpty)) {
                        out.println("  every rank's node jar and model hash to what was deployed");
                    }
                }
            }
            if (json.on()) {
                out.println(JSON.writeValueAsString(document));
            }
            out.flush();
            if (!allRunning) {
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            return ExitCodes.OK;
        }
    }

    public static String lastExit(LaunchdService.LastExit exit) {
        return exit.describe();
    }

    abstract static class Act implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "CLUSTER", description = "A cluster of the applied inventory.")
        String cluster;

        @Mixin
        SshOptions ssh;

        @Inject
        NodeService nodes;

        abstract NodeService.Action action();

        @Inject
        io.macfleet.runtime.RuntimeService runtimes;

        @Override
        public Integer call() {
            boolean bundled = runtimes.runtimeOf(cluster).name().equals(io.macfleet.runtime.BundledRuntime.NAME);
            for (String line : bundled ? nodes.act(cluster, action(), ssh.settings(Actors.commandLine()))
                    : runtimes.act(cluster, action(), ssh.settings(Actors.commandLine()))) {
                spec.commandLine().getOut().println(line);
            }
            spec.commandLine().getOut().flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "start", mixinStandardHelpOptions = true, description = "Load the node's daemon on every rank (launchctl bootstrap system).")
    static class Start extends Act {
        NodeService.Action action() {
            return NodeService.Action.START;
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true, description = "Unload the node's daemon on every rank (launchctl bootout): the cluster stops serving.")
    static class Stop extends Act {
        NodeService.Action action() {
            return NodeService.Action.STOP;
        }
    }

    @Command(name = "restart", mixinStandardHelpOptions = true, description = "Restart every rank together (launchctl kickstart -k).")
    static class Restart extends Act {
        NodeService.Action action() {
            return NodeService.Action.RESTART;
        }
    }

    @Command(name = "logs", mixinStandardHelpOptions = true, description = "The node's log on one machine (/var/log/macfleet/).")
    static class Logs implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "MACHINE", description = "A machine of the applied inventory.")
        String machine;

        @Option(names = {"-n", "--lines"}, defaultValue = "200", description = "Lines to show (default: ${DEFAULT-VALUE}).")
        int lines;

        @Option(names = {"-f", "--follow"}, description = "Keep printing new lines (every 2 s) until interrupted.")
        boolean follow;

        @Mixin
        SshOptions ssh;

        @Inject
        NodeService nodes;

        @Inject
        io.macfleet.runtime.RuntimeService runtimes;

        @Inject
        io.macfleet.inventory.DesiredStateStore desiredState;

        /** The bundled node's log, or every log of the machine's runtime daemons. */
        private String logs(SshSettings settings) {
            Optional<String> cluster = desiredState.machine(machine).map(io.macfleet.inventory.Machine::cluster);
            if (cluster.isPresent() && !runtimes.runtimeOf(cluster.get()).name().equals(io.macfleet.runtime.BundledRuntime.NAME)) {
                return runtimes.logs(cluster.get(), machine, lines, settings);
            }
            return nodes.logs(machine, lines, settings);
        }

        @Override
        public Integer call() throws InterruptedException {
            PrintWriter out = spec.commandLine().getOut();
            SshSettings settings = ssh.settings(Actors.commandLine());
            String shown = logs(settings);
            out.print(shown);
            out.flush();
            while (follow) {
                Thread.sleep(2000);
                String now = logs(settings);
                out.print(newLines(shown, now));
                out.flush();
                shown = now;
            }
            return ExitCodes.OK;
        }
    }

    /** The lines of {@code now} after the last line of {@code before} (both are tails of one growing file). */
    public static String newLines(String before, String now) {
        if (before.isEmpty()) {
            return now;
        }
        List<String> old = before.lines().toList();
        List<String> fresh = now.lines().toList();
        int best = 0;
        for (int overlap = Math.min(old.size(), fresh.size()); overlap > 0; overlap--) {
            if (fresh.subList(0, overlap).equals(old.subList(old.size() - overlap, old.size()))) {
                best = overlap;
                break;
            }
        }
        StringBuilder text = new StringBuilder();
        fresh.subList(best, fresh.size()).forEach(line -> text.append(line).append('\n'));
        return text.toString();
    }
}
