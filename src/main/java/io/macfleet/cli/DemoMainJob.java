package io.macfleet.cli;

import io.macfleet.command.Actors;
import io.macfleet.osupdate.CampaignStatus;
import io.macfleet.osupdate.CampaignView;
import io.macfleet.osupdate.OsUpdateCampaigns;
import io.macfleet.provision.ConsoleListener;
import io.macfleet.provision.OperatorAnswer;
import io.macfleet.provision.OperatorRequest;
import io.macfleet.provision.ProvisionCommand;
import io.macfleet.provision.ProvisioningListener;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunOutcome;
import io.macfleet.provision.StepStatus;
import io.macfleet.simulator.SimulatedFleet;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * macfleet's main job on the demo cluster, as {@code macfleet demo} runs it by default: provision the cluster with the
 * shipped playbook (the demo plays the person at each Mac's Recovery Terminal, through the simulator, exactly as the
 * walkthrough tells a person to), then update macOS on the whole cluster through the demo's MDM server. The inference
 * node is deployed afterwards, on the updated cluster. Each part prints what the CLI command of the same name prints,
 * so the demo's output shows a user what {@code macfleet provision} and {@code macfleet os-update apply} do.
 */
final class DemoMainJob {

    /** The operator step of the shipped provision playbook that only macOS Recovery can do. */
    static final String RECOVERY_STEP = "rdma-enabled";

    /** What the walkthrough of {@link #RECOVERY_STEP} tells a person to type in Recovery's Terminal, in order. */
    static final List<String> RECOVERY_COMMANDS = List.of("rdma_ctl enable", "reboot");

    private DemoMainJob() {
    }

    /**
     * Provisions {@code cluster} with the shipped playbook, playing the person at the Recovery step.
     *
     * @return true when every machine ended ready
     */
    static boolean provision(ProvisioningService provisioning, SimulatedFleet fleet, String cluster, PrintWriter out) {
        out.println("Provisioning cluster " + cluster + " (macfleet provision " + cluster + "); the demo plays the person at each Mac's Recovery Terminal:");
        out.flush();
        ConsoleListener console = new ConsoleListener(out, new BufferedReader(Reader.nullReader()), false, false, Actors.DEMO);
        RunOutcome outcome;
        try {
            outcome = provisioning.start(ProvisioningService.Request.cluster(cluster), Actors.DEMO, new SimulatedPerson(console, fleet, out));
        } finally {
            console.finish();
        }
        provisioning.run(outcome.runId()).ifPresent(detail -> ProvisionCommand.printRecap(out, detail));
        out.println();
        out.flush();
        if (!outcome.allReady()) {
            out.println("Provisioning did not finish (" + outcome.status() + "): " + outcome.messages()
                    + "; see macfleet provision show " + outcome.runId() + ". The demo goes on with the cluster as it is.");
            out.println();
            out.flush();
        }
        return outcome.allReady();
    }

    /**
     * Takes every Mac of {@code cluster} to {@code version} ({@code build}) in one campaign through the fleet's MDM server.
     *
     * @return true when the campaign succeeded (or every Mac already ran the target)
     */
    static boolean updateMacos(OsUpdateCampaigns campaigns, String cluster, String version, String build, PrintWriter out) {
        out.println("Updating macOS on cluster " + cluster + " to " + version + " (" + build + ") in lockstep through the demo's MDM server"
                + " (macfleet os-update apply " + cluster + " --to " + version + " --build " + build + "): preflight, drain, update, verify, undrain ...");
        out.flush();
        OsUpdateCampaigns.Request request = OsUpdateCampaigns.Request.of(List.of(cluster), version, Optional.of(build));
        OsUpdateCampaigns.Plan plan = campaigns.plan(request);
        if (!plan.passed()) {
            out.println("The preflight of " + cluster + " did not pass, so macOS was not updated (macfleet os-update plan " + cluster + " --to "
                    + version + " says why):");
            plan.clusters().forEach(planned -> planned.machines().forEach(machine -> machine.findings().forEach(finding ->
                    out.println("  " + machine.machine() + ": " + finding.problem()))));
            out.println();
            out.flush();
            return false;
        }
        CampaignView view = campaigns.apply(request, Actors.DEMO);
        io.macfleet.osupdate.OsUpdateCommand.print(out, view);
        out.println();
        out.flush();
        return view.status().equals(CampaignStatus.SUCCEEDED.wire());
    }

    /** The demo's last words: what state the main job left the cluster in, and where to look next. */
    static String conclusion(String cluster, boolean provisioned, boolean updated, String release, Optional<String> endpoint, String console) {
        StringBuilder out = new StringBuilder();
        out.append(provisioned && updated && endpoint.isPresent() ? "Done: " : "Stopped short: ").append("cluster ").append(cluster)
                .append(provisioned ? " provisioned (RDMA on, bridge off, cabling checked)" : " not fully provisioned (macfleet provision runs)")
                .append(updated ? ", every Mac on macOS " + release : ", macOS not updated (macfleet os-update status)")
                .append(endpoint.map(url -> ", serving the model at " + url).orElse(", inference node not serving (macfleet node status " + cluster + ")"))
                .append(".\n");
        out.append("Console: ").append(console).append(" (sign in with the account printed above). Stop with Ctrl-C.\n");
        return out.toString();
    }

    /**
     * The console's listener, except that the Recovery step is done by the demo: it puts the simulated Mac into Recovery
     * and types the walkthrough's commands into its Terminal, then answers "done" so the run verifies over SSH as it
     * would after a person. Other operator steps are left to a person (the console or {@code macfleet provision}).
     */
    private record SimulatedPerson(ConsoleListener console, SimulatedFleet fleet, PrintWriter out) implements ProvisioningListener {

        @Override
        public void runStarted(long runId, boolean resumed, String playbook, List<String> machines) {
            console.runStarted(runId, resumed, playbook, machines);
        }

        @Override
        public void stepStarted(String machine, String step) {
            console.stepStarted(machine, step);
        }

        @Override
        public void progress(String machine, String step, String line) {
            console.progress(machine, step, line);
        }

        @Override
        public void stepFinished(String machine, String step, StepStatus status, String summary) {
            console.stepFinished(machine, step, status, summary);
        }

        @Override
        public CompletableFuture<OperatorAnswer> operatorNeeded(OperatorRequest request) {
            if (!request.step().equals(RECOVERY_STEP)) {
                return console.operatorNeeded(request);
            }
            try {
                fleet.enterRecovery(request.machine());
                StringBuilder typed = new StringBuilder();
                for (String command : RECOVERY_COMMANDS) {
                    SimulatedFleet.RecoveryOutput output = fleet.recoveryConsole(request.machine(), command);
                    typed.append(typed.isEmpty() ? "" : ", then ").append(command);
                    if (output.exitCode() != 0) {
                        synchronized (out) {
                            out.println("  " + request.machine() + ": Recovery's Terminal answered `" + command + "` with: " + output.output().strip());
                        }
                        return CompletableFuture.completedFuture(OperatorAnswer.defer());
                    }
                }
                synchronized (out) {
                    out.println("  " + request.machine() + ": (the demo, in Recovery's Terminal) " + typed + "; macfleet verifies over SSH after the restart");
                    out.flush();
                }
                return CompletableFuture.completedFuture(OperatorAnswer.done(Actors.DEMO));
            } catch (RuntimeException e) {
                synchronized (out) {
                    out.println("  " + request.machine() + ": the demo could not play the person in Recovery: " + e.getMessage());
                }
                return CompletableFuture.completedFuture(OperatorAnswer.defer());
            }
        }

        @Override
        public void operatorVerified(OperatorRequest request, boolean verified, String detail) {
            console.operatorVerified(request, verified, detail);
        }

        @Override
        public void message(String text) {
            console.message(text);
        }
    }
}
