package io.macfleet.runtime;

import io.macfleet.runtime.RuntimeService.DaemonStatus;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Supervises the daemons of a runtime with more than one kind of daemon (llama.cpp: ggml-rpc-servers and the
 * llama-server that holds a connection to each): one look per round at every daemon (launchd, probe), then a
 * decision. A daemon that is down, or an rpc-server that started again since the cluster last served (the head's
 * connection to it is gone even when launchd brought it back), means an ordered restart: the daemons in the runtime's
 * {@link InferenceRuntime#startOrder()}, each kind ready before the next (rpc-servers first, then the head). After
 * {@value #ATTEMPTS} ordered restarts without the cluster serving in between, it is a crash loop: an alert naming the
 * daemon, its runs and last exit, and no more restarts until the cluster serves again or {@link #reset()}.
 *
 * <p>A daemon that is down and whose log, since its last start, shows one of the runtime's
 * {@link InferenceRuntime#rdmaFaultLines()} is an RDMA failure, not a crash: restarting does not clear a wedged RDMA
 * state, only a reboot of every Mac does. With the cluster's {@code supervision.rdmaFailure: reboot} the decision is
 * {@link Decision.RdmaFailure} with {@code rebootNow}: the caller reboots the Macs together, verifies RDMA, starts the
 * daemons in {@link #rebootOrder()} and reports with {@link #rebooted}; once per incident (RDMA failing again after the
 * reboot is an alert: a cable, a port, a macOS mismatch). Otherwise it is an alert recommending that reboot.
 */
public final class RuntimeSupervisor {

    static final int ATTEMPTS = 3;

    /** What a round saw and did. */
    public sealed interface Decision {
        record Serving(List<DaemonStatus> daemons) implements Decision {
        }

        record Restarted(String reason, List<String> order, Duration took) implements Decision {
        }

        /** @param raisedNow true the first time (report it), false while it stays open */
        record Alert(String message, boolean raisedNow) implements Decision {
        }

        /** No daemon of the runtime is installed on any Mac: nothing to supervise until a deployment. */
        record NotDeployed() implements Decision {
        }

        /**
         * RDMA failed (the evidence: "machine label: line"). {@code rebootNow}: the caller reboots every Mac together now and
         * reports with {@link #rebooted}; otherwise {@code message} is the alert (raised once per incident).
         */
        record RdmaFailure(List<String> evidence, boolean rebootNow, String message) implements Decision {
        }

        /** A coordinated reboot ordered by this supervisor is under way, or the daemons are starting after it. */
        record Recovering(String what) implements Decision {
        }
    }

    /** One daemon to start after a coordinated reboot, in the runtime's start order. */
    public record Daemon(String machine, int rank, String label) {
    }

    private final String cluster;
    private final InferenceRuntime runtime;
    private final Map<String, SshTarget> machines;
    private final Map<String, Integer> ranks;
    private final Duration readyTimeout;
    private final Clock clock;
    private Map<String, Long> servingPids = Map.of();
    private int attempts;
    private Optional<String> alert = Optional.empty();
    private final boolean rebootOnRdmaFailure;
    /** This RDMA incident was handled (rebooted, or the reboot recommended): once per incident, never in a loop. */
    private boolean rdmaHandled;
    private volatile boolean rebooting;
    private volatile Instant rebootedAt;
    private List<Daemon> installed = List.of();
    private volatile List<DaemonStatus> lastLook = List.of();
    /** Each daemon's log lengths (by path) when the cluster last served. */
    private Map<String, Map<String, Long>> servingLogLines = Map.of();

    /** @param machines the cluster's Macs in rank order */
    public RuntimeSupervisor(String cluster, InferenceRuntime runtime, List<SshTarget> machines, Duration readyTimeout, Clock clock) {
        this(cluster, runtime, machines, readyTimeout, clock, false);
    }

    /**
     * @param rebootOnRdmaFailure the cluster's {@code supervision.rdmaFailure: reboot}: an RDMA failure asks for a coordinated
     *                            reboot ({@link Decision.RdmaFailure#rebootNow()}); otherwise it is an alert recommending one
     */
    public RuntimeSupervisor(String cluster, InferenceRuntime runtime, List<SshTarget> machines, Duration readyTimeout, Clock clock,
                             boolean rebootOnRdmaFailure) {
        this.rebootOnRdmaFailure = rebootOnRdmaFailure;
        this.cluster = cluster;
        this.runtime = runtime;
        this.machines = new java.util.LinkedHashMap<>();
        this.ranks = new HashMap<>();
        for (int rank = 0; rank < machines.size(); rank++) {
            this.machines.put(machines.get(rank).machine(), machines.get(rank));
            this.ranks.put(machines.get(rank).machine(), rank);
        }
        this.readyTimeout = readyTimeout;
        this.clock = clock;
    }

    /** Every daemon on every Mac now. */
    public List<DaemonStatus> look(SshRun run) {
        List<MachineResult<List<DaemonStatus>>> results = run.onFleet(machines.values(),
                machine -> RuntimeProbe.look(machine, ranks.get(machine.target().machine()), runtime));
        List<DaemonStatus> all = new ArrayList<>();
        for (MachineResult<List<DaemonStatus>> result : results) {
            if (result.succeeded()) {
                all.addAll(result.value());
            } else {
                all.add(new DaemonStatus(result.machine(), ranks.get(result.machine()), "-", io.macfleet.deployment.LaunchdService.notLoaded(), "-",
                        Optional.of("unreachable"), Optional.empty(), Optional.of(io.macfleet.deployment.NodeDeployer.message(result.error()))));
            }
        }
        return all;
    }

    /** One look and what follows from it. */
    public synchronized Decision round(SshRun run) {
        if (rebooting) {
            return new Decision.Recovering("coordinated reboot of " + machines.keySet());
        }
        List<DaemonStatus> daemons = look(run);
        lastLook = daemons;
        if (daemons.stream().noneMatch(daemon -> daemon.launchd().loaded()) && rebootedAt == null) {
            return new Decision.NotDeployed();
        }
        installed = daemons.stream().filter(daemon -> daemon.launchd().loaded() || !daemon.probe().equals("-"))
                .sorted(java.util.Comparator.<DaemonStatus>comparingInt(daemon -> Math.max(0, runtime.startOrder().indexOf(daemon.label())))
                        .thenComparingInt(DaemonStatus::rank))
                .map(daemon -> new Daemon(daemon.machine(), daemon.rank(), daemon.label())).toList();
        List<DaemonStatus> down = daemons.stream().filter(daemon -> !daemon.ready()).toList();
        List<DaemonStatus> restarted = daemons.stream().filter(daemon -> daemon.launchd().pid().isPresent()
                && servingPids.containsKey(key(daemon)) && servingPids.get(key(daemon)) != daemon.launchd().pid().getAsLong()).toList();
        if (down.isEmpty() && restarted.isEmpty() && !daemons.isEmpty()) {
            servingPids = daemons.stream().filter(daemon -> daemon.launchd().pid().isPresent())
                    .collect(Collectors.toMap(RuntimeSupervisor::key, daemon -> daemon.launchd().pid().getAsLong()));
            attempts = 0;
            alert = Optional.empty();
            rdmaHandled = false;
            rebootedAt = null;
            if (!runtime.rdmaFaultLines().isEmpty()) {
                // Where each log ends now: a later RDMA incident counts only lines written after this.
                Map<String, Map<String, Long>> lines = new HashMap<>();
                for (DaemonStatus daemon : daemons) {
                    Map<String, Long> counted = run.onFleet(List.of(machines.get(daemon.machine())), machine -> RuntimeProbe.logLines(machine, daemon.label()))
                            .getFirst().value();
                    lines.put(key(daemon), counted == null ? Map.of() : counted);
                }
                servingLogLines = lines;
            }
            return new Decision.Serving(daemons);
        }
        if (!runtime.rdmaFaultLines().isEmpty() && !down.isEmpty()) {
            Optional<Decision> rdma = rdma(run, down);
            if (rdma.isPresent()) {
                return rdma.get();
            }
        }
        if (alert.isPresent()) {
            return new Decision.Alert(alert.get(), false);
        }
        if (attempts >= ATTEMPTS) {
            // The cause is the earliest in start order (a head that cannot reach a crashing rpc-server is down too).
            DaemonStatus worst = (down.isEmpty() ? restarted : down).stream()
                    .min(java.util.Comparator.comparingInt(daemon -> Math.max(0, runtime.startOrder().indexOf(daemon.label())))).orElseThrow();
            alert = Optional.of("cluster " + cluster + ": crash loop: " + worst.label() + " on " + worst.machine() + " did not stay up after "
                    + attempts + " ordered restarts (launchd runs " + (worst.launchd().runs().isPresent() ? worst.launchd().runs().getAsInt() : "?")
                    + ", last exit " + worst.launchd().lastExit() + ", " + worst.problem().or(worst::error).orElse("restarted") + "); not restarting"
                    + " again until it serves or an operator acts (macfleet node logs " + worst.machine() + ", macfleet node restart " + cluster + ")");
            return new Decision.Alert(alert.get(), true);
        }
        attempts++;
        String reason = (down.isEmpty() ? "" : "down: " + describe(down)) + (down.isEmpty() || restarted.isEmpty() ? "" : "; ")
                + (restarted.isEmpty() ? "" : "started again since the cluster served: " + describe(restarted));
        Instant start = clock.instant();
        List<String> order = orderedRestart(run, daemons);
        // Every restarted daemon has a new pid: the next look that finds them all ready records the serving pids afresh.
        servingPids = Map.of();
        return new Decision.Restarted(reason, order, Duration.between(start, clock.instant()));
    }

    /** Every daemon as the latest round saw it (empty before the first). */
    public List<DaemonStatus> lastLook() {
        return lastLook;
    }

    /** The open alert (a crash loop, an RDMA failure), if any. */
    public synchronized Optional<String> alert() {
        return alert;
    }

    /** Forgets the crash loop or RDMA incident (an operator acted). */
    public synchronized void reset() {
        attempts = 0;
        alert = Optional.empty();
        rdmaHandled = false;
        rebootedAt = null;
    }

    /**
     * The daemons as the latest look found them installed, in the runtime's start order (rpc-servers before the head):
     * the order to start them in after a coordinated reboot.
     */
    public synchronized List<Daemon> rebootOrder() {
        return installed;
    }

    /** The coordinated reboot that {@link Decision.RdmaFailure#rebootNow()} asked for ended: empty when every Mac is back and started. */
    public synchronized void rebooted(Optional<String> failure) {
        rebooting = false;
        if (failure.isPresent()) {
            alert = Optional.of("cluster " + cluster + ": the coordinated reboot did not recover RDMA: " + failure.get()
                    + "; check the Thunderbolt cables and ibv_devinfo on each Mac");
        } else {
            rebootedAt = clock.instant();
        }
    }

    /**
     * The down daemons whose log since their last start shows an RDMA fault line; the decision for them, or empty when
     * none does (then it is a crash, handled by the ordered restart).
     */
    private Optional<Decision> rdma(SshRun run, List<DaemonStatus> down) {
        List<String> evidence = new ArrayList<>();
        for (DaemonStatus daemon : down) {
            SshTarget target = machines.get(daemon.machine());
            if (target == null || daemon.label().equals("-")) {
                continue;
            }
            List<String> lines = run.onFleet(List.of(target), machine -> RuntimeProbe.rdmaFaults(machine, daemon.label(), runtime,
                    servingLogLines.getOrDefault(key(daemon), Map.of()))).getFirst().value();
            if (lines != null) {
                lines.forEach(line -> evidence.add(daemon.machine() + " " + daemon.label() + ": " + line));
            }
        }
        if (evidence.isEmpty()) {
            return Optional.empty();
        }
        String shown = String.join("; ", evidence.stream().limit(4).toList()) + (evidence.size() > 4 ? "; ..." : "");
        if (rebootedAt != null) {
            if (Duration.between(rebootedAt, clock.instant()).compareTo(readyTimeout) < 0) {
                // Just rebooted: the daemons are starting, and a log may still end with the lines from before the reboot.
                return Optional.of(new Decision.Recovering("daemons starting after the coordinated reboot"));
            }
            if (alert.isEmpty()) {
                alert = Optional.of("cluster " + cluster + ": RDMA failed again after the coordinated reboot (" + shown + "); a reboot does not fix"
                        + " this one: check the Thunderbolt cables and that every Mac runs the same macOS; not rebooting again until it serves"
                        + " or an operator acts");
                return Optional.of(new Decision.RdmaFailure(evidence, false, alert.get()));
            }
            return Optional.of(new Decision.Alert(alert.get(), false));
        }
        if (rdmaHandled) {
            return Optional.of(alert.<Decision>map(message -> new Decision.Alert(message, false))
                    .orElse(new Decision.Recovering("RDMA incident handled")));
        }
        rdmaHandled = true;
        if (rebootOnRdmaFailure) {
            rebooting = true;
            return Optional.of(new Decision.RdmaFailure(evidence, true, "cluster " + cluster + ": RDMA failed (" + shown + "): coordinated reboot of "
                    + String.join(", ", machines.keySet())));
        }
        alert = Optional.of("cluster " + cluster + ": RDMA failed (" + shown + "). Recommended: reboot every Mac of the cluster together ("
                + String.join(", ", machines.keySet()) + "; only a full reboot clears a wedged RDMA state), then check ibv_devinfo and the"
                + " cabling; or set supervision.rdmaFailure: reboot on the cluster in the inventory to let macfleet do it");
        return Optional.of(new Decision.RdmaFailure(evidence, false, alert.get()));
    }

    /**
     * Restarts every daemon of the runtime in its start order: each label on every Mac that has it, then waits for
     * their probes before the next label. A daemon of an earlier label that is fine is restarted only when it was the
     * one that failed; the later labels (the head) always restart, as their connections to the earlier ones are gone.
     */
    private List<String> orderedRestart(SshRun run, List<DaemonStatus> daemons) {
        List<String> done = new ArrayList<>();
        boolean restartRest = false;
        for (String label : runtime.startOrder()) {
            List<DaemonStatus> ofLabel = daemons.stream().filter(daemon -> daemon.label().equals(label)).toList();
            List<DaemonStatus> chosen = restartRest ? ofLabel : ofLabel.stream().filter(daemon -> !daemon.ready()
                    || (daemon.launchd().pid().isPresent() && servingPids.containsKey(key(daemon))
                    && servingPids.get(key(daemon)) != daemon.launchd().pid().getAsLong())).toList();
            if (chosen.isEmpty()) {
                continue;
            }
            restartRest = true;
            for (DaemonStatus daemon : chosen) {
                CommandResult kick = run.execute(machines.get(daemon.machine()), Command.sudo(PrivilegedProgram.LAUNCHCTL, "kickstart", "-k",
                        "system/" + label));
                done.add(daemon.machine() + " " + label + (kick.succeeded() ? "" : " (kickstart exit " + kick.exitStatus() + ")"));
            }
            long deadline = System.nanoTime() + readyTimeout.toNanos();
            for (DaemonStatus daemon : chosen) {
                List<DaemonStatus> now = List.of();
                while (System.nanoTime() < deadline) {
                    now = run.onFleet(List.of(machines.get(daemon.machine())), machine -> RuntimeProbe.look(machine, daemon.rank(), runtime))
                            .getFirst().value();
                    if (now != null && now.stream().anyMatch(status -> status.label().equals(label) && status.ready())) {
                        break;
                    }
                    sleep(250);
                }
            }
        }
        return done;
    }

    private static String describe(List<DaemonStatus> daemons) {
        return daemons.stream().map(daemon -> daemon.label() + " on " + daemon.machine() + daemon.problem().map(problem -> " (" + problem + ")").orElse(""))
                .collect(Collectors.joining(", "));
    }

    private static String key(DaemonStatus daemon) {
        return daemon.machine() + "/" + daemon.label();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
