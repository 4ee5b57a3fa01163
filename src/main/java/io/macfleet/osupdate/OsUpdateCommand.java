package io.macfleet.osupdate;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.command.ActorOption;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.LocalDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet os-update plan|apply|status|resume|pause}: OS-update campaigns, a cluster updated as one. */
@Command(name = "os-update", mixinStandardHelpOptions = true,
        description = {"Update macOS on whole clusters in lockstep: preflight every machine, drain the cluster, update all nodes together,"
                + " verify the exact version and build, undrain. State is in the database: a stopped campaign resumes where it stopped.",
                "See docs/os-updates.md."},
        subcommands = {OsUpdateCommand.PlanCommand.class, OsUpdateCommand.ApplyCommand.class, OsUpdateCommand.StatusCommand.class,
                OsUpdateCommand.ResumeCommand.class, OsUpdateCommand.PauseCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (plan: every preflight passed; apply/resume: the campaign succeeded)",
                "1:a preflight or the campaign failed, or it was paused, or another process works on it",
                "2:usage error (unknown cluster, campaign or method; bad version; apply without --yes off a terminal)"})
public class OsUpdateCommand {

    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().findAndRegisterModules().disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .enable(SerializationFeature.INDENT_OUTPUT);
    }

    /** What to update: the clusters and the target. */
    static class Target {
        @Parameters(arity = "0..*", paramLabel = "CLUSTER", description = "Clusters in order; the first is the canary, updated alone first.")
        List<String> clusters = new ArrayList<>();

        @Option(names = "--all", description = "Every cluster of the applied inventory, by name (the first is the canary).")
        boolean all;

        @Option(names = "--to", required = true, paramLabel = "VERSION", description = "Target macOS version, e.g. 26.2.")
        String version;

        @Option(names = "--build", paramLabel = "BUILD", description = "Exact target build, e.g. 25C56 (recommended: every node lands on it).")
        String build;

        @Option(names = "--via", paramLabel = "METHOD", defaultValue = "mdm", description = "Update method: mdm (default) or ssh.")
        String via;
    }

    @Command(name = "plan", mixinStandardHelpOptions = true, description = "Preflight every machine of the clusters; changes nothing.")
    static class PlanCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        Target target;

        @Mixin
        JsonOption json;

        @Inject
        OsUpdateCampaigns campaigns;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            OsUpdateCampaigns.Plan plan = campaigns.plan(request(target, 1, false, null, null));
            if (json.on()) {
                out.println(Json.MAPPER.writeValueAsString(plan));
            } else {
                out.println("Preflight for " + plan.target() + " via " + plan.method() + " (nothing was changed):");
                for (OsUpdateCampaigns.PlannedCluster cluster : plan.clusters()) {
                    out.println(cluster.cluster() + ": " + (cluster.passed() ? "ready" : "blocked"));
                    for (PreflightResult machine : cluster.machines()) {
                        String on = machine.osVersion().orElse("?") + " (" + machine.buildVersion().orElse("?") + ")";
                        out.printf(Locale.ROOT, "  %-16s %-18s %s%n", machine.machine(), on, machine.passed() ? "ok" : "BLOCKED");
                        for (PreflightFinding finding : machine.findings()) {
                            out.println("      " + finding.check().name().toLowerCase(Locale.ROOT).replace('_', '-') + ": " + finding.problem());
                            out.println("      fix: " + finding.fix());
                        }
                    }
                    cluster.cabling().forEach(error -> out.println("  cabling: " + error));
                }
            }
            out.flush();
            if (!plan.passed()) {
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "apply", mixinStandardHelpOptions = true,
            description = "Run the campaign (or continue the unfinished one of the same clusters and target) until it succeeds, fails or is paused.")
    static class ApplyCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        Target target;

        @Option(names = "--yes", description = "Do not ask for confirmation (required when not on a terminal).")
        boolean yes;

        @Option(names = "--clusters-at-once", paramLabel = "N", defaultValue = "1", description = "After the canary, update N clusters at a time (default ${DEFAULT-VALUE}).")
        int clustersAtOnce;

        @Option(names = "--continue-on-failure", description = "Go on with the other clusters when one fails (default: stop at the first failed cluster).")
        boolean continueOnFailure;

        @Option(names = "--install-by", paramLabel = "yyyy-mm-ddThh:mm:ss", description = "The Macs' forced-install time, their local time (default: now).")
        String installBy;

        @Option(names = "--service-label", paramLabel = "LABEL", description = "launchd label of the inference daemon to stop while updating (default "
                + OsUpdateCampaigns.DEFAULT_SERVICE_LABEL + ").")
        String serviceLabel;

        @Mixin
        ActorOption actor;

        @Inject
        OsUpdateCampaigns campaigns;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            OsUpdateCampaigns.Request request = request(target, clustersAtOnce, continueOnFailure, installBy, serviceLabel);
            if (!yes) {
                java.io.Console console = System.console();
                if (console == null) {
                    throw new OsUpdateCampaigns.InvalidCampaignException("apply stops inference on the clusters and updates macOS: add --yes"
                            + " (not on a terminal, so it cannot ask)");
                }
                String answer = console.readLine("Drain and update %s to %s%s via %s? Type yes: ", target.all ? "every cluster" : String.join(", ", target.clusters),
                        target.version, target.build == null ? "" : " (" + target.build + ")", target.via);
                if (answer == null || !answer.strip().equals("yes")) {
                    out.println("Nothing was changed.");
                    out.flush();
                    throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                }
            }
            CampaignView view = campaigns.apply(request, actor.name());
            print(out, view);
            return exitCode(view);
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Campaigns (newest first), or one campaign with each machine's phase.")
    static class StatusCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(arity = "0..1", paramLabel = "CAMPAIGN", description = "A campaign id.")
        Long id;

        @Mixin
        JsonOption json;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "How many campaigns to list (default ${DEFAULT-VALUE}).")
        int limit;

        @Inject
        OsUpdateCampaigns campaigns;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            if (id != null) {
                CampaignView view = campaigns.campaign(id).orElseThrow(() -> new OsUpdateCampaigns.UnknownCampaignException(id));
                if (json.on()) {
                    out.println(Json.MAPPER.writeValueAsString(view));
                } else {
                    print(out, view);
                }
                out.flush();
                return ExitCodes.OK;
            }
            List<CampaignView> all = campaigns.campaigns(limit);
            if (json.on()) {
                out.println(Json.MAPPER.writeValueAsString(all));
            } else if (all.isEmpty()) {
                out.println("No OS-update campaigns yet (macfleet os-update plan CLUSTER --to VERSION).");
            } else {
                out.printf(Locale.ROOT, "%-5s %-10s %-16s %-5s %-30s %s%n", "id", "status", "target", "via", "clusters", "by");
                for (CampaignView view : all) {
                    String clusters = view.clusters().stream().map(cluster -> cluster.cluster() + ":" + cluster.step()).reduce((a, b) -> a + " " + b).orElse("");
                    out.printf(Locale.ROOT, "%-5d %-10s %-16s %-5s %-30s %s%n", view.id(), view.status(), view.target(), view.method(), clusters, view.createdBy());
                }
                Map<String, String> maintenance = campaigns.maintenance();
                maintenance.forEach((cluster, why) -> out.println("down for maintenance: " + cluster + " (" + why + ")"));
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true,
            description = "Continue a paused or failed campaign (after fixing what it reported), or one whose process died; runs until it ends.")
    static class ResumeCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "CAMPAIGN", description = "The campaign id.")
        long id;

        @Mixin
        ActorOption actor;

        @Inject
        OsUpdateCampaigns campaigns;

        @Override
        public Integer call() {
            CampaignView view = campaigns.resume(id, actor.name());
            print(spec.commandLine().getOut(), view);
            return exitCode(view);
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true,
            description = "Ask the process running a campaign to stop at its next check; Macs already installing carry on (macOS cannot be stopped).")
    static class PauseCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "CAMPAIGN", description = "The campaign id.")
        long id;

        @Mixin
        ActorOption actor;

        @Inject
        OsUpdateCampaigns campaigns;

        @Override
        public Integer call() {
            CampaignView view = campaigns.pause(id, actor.name());
            spec.commandLine().getOut().println("Campaign " + view.id() + " is paused; `macfleet os-update resume " + view.id() + "` continues it.");
            spec.commandLine().getOut().flush();
            return ExitCodes.OK;
        }
    }

    static OsUpdateCampaigns.Request request(Target target, int clustersAtOnce, boolean continueOnFailure, String installBy, String serviceLabel) {
        Optional<LocalDateTime> when;
        try {
            when = installBy == null ? Optional.empty() : Optional.of(LocalDateTime.parse(installBy));
        } catch (DateTimeParseException e) {
            throw new OsUpdateCampaigns.InvalidCampaignException("--install-by '" + installBy + "' is not a local time like 2026-12-01T02:00:00");
        }
        return new OsUpdateCampaigns.Request(target.clusters, target.all, target.version, Optional.ofNullable(target.build), target.via, clustersAtOnce,
                continueOnFailure, when, Optional.ofNullable(serviceLabel));
    }

    /** 0 when the campaign succeeded; else the failure (its view, printed, says why). */
    static int exitCode(CampaignView view) {
        if (!view.status().equals(CampaignStatus.SUCCEEDED.wire())) {
            throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
        }
        return ExitCodes.OK;
    }

    public static void print(PrintWriter out, CampaignView view) {
        out.println("Campaign " + view.id() + " " + view.status() + ": to " + view.target() + " via " + view.method() + ", install by "
                + view.installBy() + ", started by " + view.createdBy());
        for (CampaignView.ClusterView cluster : view.clusters()) {
            out.println(cluster.cluster() + ": " + cluster.step() + cluster.failedStep().map(step -> " (at " + step + ")").orElse(""));
            cluster.failure().ifPresent(failure -> out.println("  " + failure));
            for (CampaignView.MachineView machine : cluster.machines()) {
                String on = machine.osVersion().orElse("?") + " (" + machine.buildVersion().orElse("?") + ")";
                out.printf(Locale.ROOT, "  %-16s %-12s %-18s %s%n", machine.machine(), machine.phase(), on, machine.detail().orElse(""));
                machine.fix().ifPresent(fix -> out.println("      fix: " + fix));
            }
        }
        out.flush();
    }
}
