package io.macfleet.runtime;

import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.LaunchDaemonPlist;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.SshRun;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A lockstep upgrade of a runtime's build (llama.cpp's build directory, MLX's mlx and mlx-lm versions) as a drained,
 * verified campaign, all Macs at once: llama.cpp's RPC and MLX's collectives need the identical build on every Mac, so a
 * Mac-by-Mac upgrade would leave a cluster that cannot serve. Steps:
 * <ol>
 *   <li>read what every Mac runs now (the installed daemons' definitions and the build their programs print);</li>
 *   <li>install the new build on every Mac beside the running one (llama.cpp: a directory per content hash; MLX: a venv
 *       per version pair), check each copy's SHA-256 and read the new build back on each Mac: Macs that would run
 *       different builds are refused here, naming each Mac's, and nothing has changed yet (the old build still serves);</li>
 *   <li>drain: every daemon of the runtime stopped, the head first (clients see the endpoint go away, not half a cluster);</li>
 *   <li>start the new daemons in the runtime's start order, each order ready before the next (rpc-servers, then the head),
 *       and the cluster's health probe answering; then read the running build back from every Mac;</li>
 *   <li>on any failure in 3 or 4: the previous definitions are installed again and started in order (the previous build's
 *       files are still on every Mac), and the failure says so.</li>
 * </ol>
 */
public final class RuntimeUpgrade {

    /**
     * What one Mac runs before and after.
     *
     * @param differs whether the plan's daemons run other programs than the installed ones (another build directory or venv)
     */
    public record MachineChange(String machine, String from, String to, boolean differs) {
    }

    /** What an upgrade would do: each Mac's build now and the plan's. */
    public record Preview(String cluster, String runtime, List<MachineChange> machines, String endpoint) {
        public boolean changes() {
            return machines.stream().anyMatch(MachineChange::differs);
        }

        public String text() {
            StringBuilder text = new StringBuilder("Upgrade of " + runtime + " on cluster " + cluster + " (all Macs together, drained):\n");
            machines.forEach(machine -> text.append("  ").append(machine.machine()).append(": ").append(machine.from()).append(" -> ")
                    .append(machine.to()).append(machine.differs() ? "" : " (already installed)").append('\n'));
            return text.toString();
        }
    }

    /** How it ended ({@code upgraded} false: every Mac already ran the plan). A failed upgrade throws instead, after its rollback. */
    public record Outcome(boolean upgraded, List<MachineChange> machines, String endpoint, String summary) {
    }

    /** What one Mac runs now: its installed daemons (definition and the plist's text) and the build they print. */
    record Installed(String machine, List<LaunchDaemon> daemons, Map<String, String> plists, String build) {
    }

    private final InferenceRuntime runtime;
    private final RuntimeDeployer deployer;

    public RuntimeUpgrade(InferenceRuntime runtime, RuntimeDeployer deployer) {
        this.runtime = runtime;
        this.deployer = deployer;
    }

    /** What every Mac runs now and what the plan would put there; changes nothing. */
    public Preview preview(SshRun run, RuntimePlan plan) {
        List<Installed> installed = installed(run, plan);
        return new Preview(plan.cluster(), plan.runtime(), installed.stream().map(machine -> new MachineChange(machine.machine(), machine.build(),
                plan.build(), differs(machine, plan.machine(machine.machine())))).toList(), plan.endpoint());
    }

    /** Whether the plan runs other programs on this Mac than its installed daemons do (a new build directory or venv). */
    private static boolean differs(Installed installed, MachinePlan planned) {
        return !installed.daemons().stream().map(daemon -> daemon.programArguments().getFirst()).collect(Collectors.toSet())
                .equals(planned.daemons().stream().map(daemon -> daemon.daemon().programArguments().getFirst()).collect(Collectors.toSet()));
    }

    /** The campaign; throws {@link RuntimeRefused} when nothing was changed, {@link NodeDeployer.DeployFailedException} after a rollback. */
    public Outcome upgrade(SshRun run, RuntimePlan plan, NodeDeployer.Listener listener) {
        List<Installed> before = installed(run, plan);
        List<String> bare = before.stream().filter(machine -> machine.daemons().isEmpty()).map(Installed::machine).toList();
        if (!bare.isEmpty()) {
            throw new RuntimeRefused("cluster " + plan.cluster() + ": " + String.join(", ", bare) + " run" + (bare.size() == 1 ? "s" : "")
                    + " no " + plan.runtime() + " daemon: an upgrade replaces a running build (deploy it first: macfleet node deploy " + plan.cluster() + ")");
        }
        // Install beside the running build, SHA-256 and the build read back on every Mac; skew refused. Nothing switched yet.
        List<RuntimeDeployer.Staged> staged = deployer.stage(run, plan, listener);
        String to = staged.getFirst().build().orElse(plan.build());
        List<MachineChange> changes = before.stream().map(machine -> new MachineChange(machine.machine(), machine.build(), to,
                differs(machine, plan.machine(machine.machine())))).toList();
        if (staged.stream().allMatch(RuntimeDeployer.Staged::unchanged) && RuntimeDeployer.ready(plan.health())) {
            return new Outcome(false, changes, plan.endpoint(), "nothing to upgrade: every Mac already runs " + plan.runtime() + " " + to
                    + " as planned; serving at " + plan.endpoint());
        }
        try {
            drain(run, plan, listener);
            deployer.switchAll(run, plan, listener);
            List<Installed> after = installed(run, plan);
            List<String> wrong = after.stream().filter(machine -> !machine.build().equals(to)).map(machine -> machine.machine() + " " + machine.build()).toList();
            if (!wrong.isEmpty()) {
                throw new NodeDeployer.DeployFailedException("after the switch, not every Mac runs " + to + ": " + String.join(", ", wrong), true, null);
            }
        } catch (RuntimeException failure) {
            String why = failure instanceof NodeDeployer.DeployFailedException || failure instanceof RuntimeRefused ? failure.getMessage()
                    : NodeDeployer.message(failure);
            String previous = before.stream().map(Installed::build).distinct().collect(Collectors.joining(", "));
            try {
                rollBack(run, plan, before, listener);
            } catch (RuntimeException rollbackFailure) {
                throw new NodeDeployer.DeployFailedException("upgrade of cluster " + plan.cluster() + " to " + plan.runtime() + " " + to + " failed ("
                        + why + ") and the rollback to " + previous + " failed too (" + NodeDeployer.message(rollbackFailure)
                        + "); the cluster is not serving: macfleet node status " + plan.cluster(), true, failure);
            }
            throw new NodeDeployer.DeployFailedException("upgrade of cluster " + plan.cluster() + " to " + plan.runtime() + " " + to + " failed ("
                    + why + "); rolled back: every Mac runs " + previous + " again and the cluster serves at " + plan.endpoint(), true, failure);
        }
        return new Outcome(true, changes, plan.endpoint(), "upgraded " + plan.machines().size() + " Macs of " + plan.cluster() + " together from "
                + before.stream().map(Installed::build).distinct().collect(Collectors.joining(", ")) + " to " + plan.runtime() + " " + to
                + " (drained, rpc/ranks started in order, health verified); serving at " + plan.endpoint());
    }

    /** Stops every daemon of the runtime, the last in start order (the head, which clients reach) first. */
    private void drain(SshRun run, RuntimePlan plan, NodeDeployer.Listener listener) {
        for (String label : runtime.startOrder().reversed()) {
            NodeDeployer.failOn(run.onFleet(plan.machines().stream().map(MachinePlan::ssh).toList(), machine -> {
                listener.step(machine.target().machine(), "draining: stopping " + label);
                RuntimeDeployer.bootout(machine, label);
                return null;
            }), "draining " + label);
        }
    }

    /** The previous definitions installed again and started in the runtime's start order, each ready before the next. */
    private void rollBack(SshRun run, RuntimePlan plan, List<Installed> before, NodeDeployer.Listener listener) {
        NodeDeployer.failOn(run.onFleet(plan.machines().stream().map(MachinePlan::ssh).toList(), machine -> {
            listener.step(machine.target().machine(), "rolling back: stopping the new daemons");
            for (String label : runtime.labels()) {
                RuntimeDeployer.bootout(machine, label);
            }
            return null;
        }), "stopping the new daemons");
        for (String label : runtime.startOrder()) {
            List<Installed> having = before.stream().filter(machine -> machine.daemons().stream().anyMatch(daemon -> daemon.label().equals(label))).toList();
            if (having.isEmpty()) {
                continue;
            }
            NodeDeployer.failOn(run.onFleet(having.stream().map(machine -> plan.machine(machine.machine()).ssh()).toList(), machine -> {
                Installed installed = having.stream().filter(one -> one.machine().equals(machine.target().machine())).findFirst().orElseThrow();
                LaunchDaemon daemon = installed.daemons().stream().filter(one -> one.label().equals(label)).findFirst().orElseThrow();
                listener.step(installed.machine(), "rolling back: starting " + label + " of " + installed.build());
                machine.upload(RuntimeDeployer.stagedPlist(daemon), installed.plists().get(label).getBytes(StandardCharsets.UTF_8), 0644);
                RuntimeDeployer.start(machine, daemon);
                return null;
            }), "starting the previous daemons");
            for (Installed machine : having) {
                LaunchDaemon daemon = machine.daemons().stream().filter(one -> one.label().equals(label)).findFirst().orElseThrow();
                runtime.probe(daemon).ifPresent(probe -> deployer.awaitReady(machine.machine(), label, probe));
            }
        }
        deployer.awaitReady(plan.machines().getFirst().machine(), "the cluster", plan.health());
    }

    /** Every Mac's installed daemons of this runtime and the build they print, in the plan's rank order. */
    List<Installed> installed(SshRun run, RuntimePlan plan) {
        List<MachineResult<Installed>> results = run.onFleet(plan.machines().stream().map(MachinePlan::ssh).toList(), this::installedOn);
        List<String> failures = results.stream().filter(result -> !result.succeeded())
                .map(result -> result.machine() + ": " + NodeDeployer.message(result.error())).toList();
        if (!failures.isEmpty()) {
            throw new RuntimeRefused("cannot read what the Macs run now, nothing was changed: " + String.join("; ", failures));
        }
        List<Installed> all = new ArrayList<>(results.stream().map(MachineResult::value).toList());
        all.sort(Comparator.comparingInt(machine -> plan.machine(machine.machine()).rank()));
        return all;
    }

    private Installed installedOn(MachineSession machine) throws IOException {
        List<LaunchDaemon> daemons = new ArrayList<>();
        Map<String, String> plists = new TreeMap<>();
        String build = "nothing installed";
        for (String label : runtime.labels()) {
            CommandResult plist = machine.execute(Command.reading("cat", LaunchDaemon.DAEMON_DIRECTORY + label + ".plist"));
            if (!plist.succeeded()) {
                continue;
            }
            LaunchDaemon daemon = LaunchDaemonPlist.parse(plist.stdout());
            daemons.add(daemon);
            plists.put(label, plist.stdout());
            Optional<List<String>> version = runtime.versionCommand(daemon);
            if (version.isPresent()) {
                CommandResult printed = machine.execute(Command.reading(version.get().getFirst(),
                        version.get().subList(1, version.get().size()).toArray(String[]::new)));
                build = runtime.build(printed.stdout() + "\n" + printed.stderr()).orElse("unreadable build (" + version.get().getFirst() + ")");
            }
        }
        return new Installed(machine.target().machine(), daemons, plists, build);
    }
}
