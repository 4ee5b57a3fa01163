package io.macfleet.osupdate;

import io.macfleet.facts.FactsService;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.DeclarativeManagement;
import io.macfleet.mdm.DeclarativeOsUpdates;
import io.macfleet.mdm.EnrollmentState;
import io.macfleet.mdm.MdmAdapters;
import io.macfleet.mdm.MdmConnection;
import io.macfleet.mdm.MdmServerException;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.SoftwareUpdateStatus.InstallState;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Updates through the fleet's MDM server with Declarative Device Management: one declaration set per cluster
 * ({@link DeclarativeOsUpdates}: settings with automatic updates off, status subscriptions, the exact enforcement,
 * an activation), assigned to each machine's enrollment. Progress comes from the status items the Mac reports.
 * The server is the applied inventory's {@code mdm:} section (NanoHUB); the Mac's own state that the server does not
 * expose (bootstrap token, free disk, version) is read over SSH with the facts commands.
 */
@ApplicationScoped
public class MdmUpdateMethod implements UpdateMethod {
    /** Our margin for a minor update's download and preparation, not a number Apple publishes. */
    static final long MINIMUM_FREE_DISK_BYTES = 20L << 30;

    private final Supplier<Optional<MdmConnection>> server;
    private final FactsService facts;
    private final SshSettings ssh;

    @Inject
    public MdmUpdateMethod(DesiredStateStore desiredState, FactsService facts) {
        this(() -> desiredState.mdm().map(mdm -> MdmAdapters.connect(mdm, Duration.ofSeconds(20))), facts, SshSettings.defaults("os-update"));
    }

    /** Wired by hand (tests and tools). */
    public MdmUpdateMethod(DeclarativeManagement server, FactsService facts, SshSettings ssh) {
        this(MdmConnection.declarative(server), facts, ssh);
    }

    /** Wired by hand with any kind of MDM connection. */
    public MdmUpdateMethod(MdmConnection server, FactsService facts, SshSettings ssh) {
        this(() -> Optional.of(server), facts, ssh);
    }

    private MdmUpdateMethod(Supplier<Optional<MdmConnection>> server, FactsService facts, SshSettings ssh) {
        this.server = server;
        this.facts = facts;
        this.ssh = ssh;
    }

    @Override
    public String name() {
        return "mdm";
    }

    /** A change the server stored and queued but could not push: the Mac gets it at its next check-in; never sent again. */
    private static String pushNote(Change change) {
        return change.pushNote().map(note -> " (" + note + ")").orElse("");
    }

    @Override
    public PreflightResult preflight(Machine machine, OsUpdateTarget target) {
        List<PreflightFinding> findings = new ArrayList<>();
        String name = machine.name();
        Optional<MdmConnection> mdm;
        try {
            mdm = server.get();
        } catch (RuntimeException e) {
            mdm = Optional.empty();
            findings.add(new PreflightFinding(name, PreflightFinding.Check.ENROLLED, "the MDM server cannot be used: " + e.getMessage(),
                    "fix the inventory's mdm: section, run `macfleet inventory apply`, then plan again"));
        }
        EnrollmentState.BootstrapToken serverToken = EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER;
        if (machine.mdmEnrollmentId() == null) {
            findings.add(new PreflightFinding(name, PreflightFinding.Check.ENROLLED, "no mdm.enrollmentId in the inventory",
                    "add mdm.enrollmentId (the Mac's UDID as the MDM server knows it) to " + name + " in the inventory, apply it, then plan again"));
        } else if (mdm.isEmpty() && findings.isEmpty()) {
            findings.add(new PreflightFinding(name, PreflightFinding.Check.ENROLLED, "the applied inventory has no mdm: section",
                    "add the mdm: section (url, apiToken reference) to the inventory and apply it, or update over SSH (--via ssh)"));
        } else if (mdm.isPresent()) {
            try {
                EnrollmentState enrollment = mdm.get().enrollment(machine.mdmEnrollmentId());
                serverToken = enrollment.bootstrapToken();
                if (!enrollment.declarativeStatusSeen()) {
                    findings.add(new PreflightFinding(name, PreflightFinding.Check.ENROLLED, "the MDM server (" + mdm.get().describe()
                            + ") has no declarative status from enrollment " + machine.mdmEnrollmentId() + ": not enrolled, or it never checked in",
                            "enroll " + name + " in the MDM server (Automated Device Enrollment, supervised) and check that its mdm.enrollmentId is its UDID"));
                }
            } catch (MdmServerException e) {
                findings.add(new PreflightFinding(name, PreflightFinding.Check.REACHABLE, e.getMessage(),
                        "make the MDM server reachable with the inventory's URL and key, then plan again"));
            }
        }
        Optional<String> version = Optional.empty();
        Optional<String> build = Optional.empty();
        MachineResult<MachineFacts> gathered = facts.gather(List.of(machine), ssh).results().getFirst();
        if (!gathered.succeeded()) {
            findings.add(new PreflightFinding(name, PreflightFinding.Check.REACHABLE, "not reachable over SSH: " + gathered.describe(),
                    "make " + name + " reachable (power, network, SSH key), then plan again"));
        } else {
            MachineFacts observed = gathered.value();
            version = Optional.ofNullable(observed.macosVersion());
            build = Optional.ofNullable(observed.macosBuild());
            if (observed.read(io.macfleet.facts.FactsGatherer.BOOTSTRAP_TOKEN_FACT) && !observed.bootstrapTokenSupportedOnServer()) {
                // "Bootstrap Token supported on server: NO": the Mac has no MDM server that takes a token, so it is not
                // enrolled. That is the blocker to name; a bootstrap-token finding would send the operator to a playbook
                // that cannot apply.
                findings.add(new PreflightFinding(name, PreflightFinding.Check.ENROLLED,
                        "the Mac is not enrolled in MDM (profiles status -type bootstraptoken: \"Bootstrap Token supported on server: NO\")",
                        "enroll " + name + " in the MDM server (Automated Device Enrollment, supervised); `macfleet mdm status " + name
                                + "` shows both sides; then plan again"));
            }
            boolean escrowed = serverToken == EnrollmentState.BootstrapToken.ESCROWED
                    || (serverToken == EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER && observed.bootstrapTokenEscrowed());
            if (!escrowed && (observed.bootstrapTokenSupportedOnServer() || !observed.read(io.macfleet.facts.FactsGatherer.BOOTSTRAP_TOKEN_FACT))) {
                boolean unknown = serverToken == EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER
                        && !observed.read(io.macfleet.facts.FactsGatherer.BOOTSTRAP_TOKEN_FACT);
                findings.add(new PreflightFinding(name, PreflightFinding.Check.BOOTSTRAP_TOKEN, unknown
                        ? "whether a bootstrap token is escrowed is unknown: " + observed.unreadableFacts().get(io.macfleet.facts.FactsGatherer.BOOTSTRAP_TOKEN_FACT)
                        : "no bootstrap token is escrowed with the MDM server (profiles status -type bootstraptoken): the Mac cannot authorize the update",
                        unknown ? "run `profiles status -type bootstraptoken` on " + name + " and see `macfleet facts show " + name
                                + "`; escrow the token if it is not, then plan again"
                                : "escrow it: `macfleet provision " + (machine.cluster() == null ? "CLUSTER" : machine.cluster()) + " --machine " + name
                                + " --playbook bootstrap-token`, then plan again"));
            }
            if (observed.freeDiskBytes() < MINIMUM_FREE_DISK_BYTES) {
                findings.add(new PreflightFinding(name, PreflightFinding.Check.FREE_DISK, "only " + (observed.freeDiskBytes() >> 30)
                        + " GiB free on / (the update needs " + (MINIMUM_FREE_DISK_BYTES >> 30) + " GiB)", "free disk space on " + name + " (df -h /), then plan again"));
            }
            if (observed.macosVersion() != null && Versions.compare(observed.macosVersion(), target.osVersion()) > 0) {
                findings.add(new PreflightFinding(name, PreflightFinding.Check.CURRENT_VERSION, "runs macOS " + observed.macosVersion() + " ("
                        + observed.macosBuild() + "), newer than the target " + target.osVersion() + ": macOS cannot be downgraded",
                        "plan the campaign to " + observed.macosVersion() + " or newer, so the cluster stays on one version"));
            }
        }
        return new PreflightResult(name, version, build, findings);
    }

    @Override
    public StartResult start(Machine machine, OsUpdateTarget target) {
        MdmConnection mdm = server.get().orElseThrow(() -> new IllegalStateException("the applied inventory has no mdm: section"));
        String cluster = machine.cluster() == null ? machine.name() : machine.cluster();
        List<StartResult.Action> actions = new ArrayList<>();
        try {
            List<Change> changes = mdm.enforce(cluster, target, List.of(machine.mdmEnrollmentId()));
            if (mdm.declarative().isEmpty()) {
                // A server that takes a target, not declarations (Fleet, Jamf): one action.
                actions.add(new StartResult.Action("enforcement", cluster + " <- " + target.osVersion() + target.buildVersion().map(b -> " (" + b + ")").orElse("")
                        + pushNote(changes.isEmpty() ? Change.UNCHANGED : changes.getLast()), changes.stream().anyMatch(Change::changed)));
                return StartResult.started(machine.name(), actions);
            }
            // The same calls in the same order as DeclarativeOsUpdates.enforce: 4 declarations, 4 set members, 1 assignment.
            var declarations = DeclarativeOsUpdates.declarations(cluster, target);
            String set = DeclarativeOsUpdates.setName(cluster);
            for (int index = 0; index < declarations.size(); index++) {
                actions.add(new StartResult.Action("declaration", declarations.get(index).identifier() + pushNote(changes.get(index)), changes.get(index).changed()));
            }
            for (int index = 0; index < declarations.size(); index++) {
                Change change = changes.get(declarations.size() + index);
                actions.add(new StartResult.Action("set-declaration", set + " <- " + declarations.get(index).identifier() + pushNote(change), change.changed()));
            }
            actions.add(new StartResult.Action("enrollment-set", machine.mdmEnrollmentId() + " <- " + set + pushNote(changes.getLast()), changes.getLast().changed()));
            return StartResult.started(machine.name(), actions);
        } catch (MdmServerException e) {
            return StartResult.failed(machine.name(), actions, e.getMessage());
        }
    }

    @Override
    public UpdateProgress progress(Machine machine, OsUpdateTarget target) {
        SoftwareUpdateStatus status;
        try {
            MdmConnection mdm = server.get().orElseThrow(() -> new IllegalStateException("the applied inventory has no mdm: section"));
            status = mdm.status(List.of(machine.mdmEnrollmentId())).getFirst();
        } catch (MdmServerException | IllegalStateException e) {
            return UpdateProgress.unknown(e.getMessage());
        }
        Optional<String> version = status.osVersion();
        Optional<String> build = status.buildVersion();
        if (version.isEmpty() && status.installState().isEmpty()) {
            // Every Mac reports its OS version in its first status report: nothing at all means the server no longer
            // (or never) knows this enrollment, e.g. its storage was reset. The phase deadline ends the wait.
            return UpdateProgress.unknown("the MDM server has no status report from enrollment " + machine.mdmEnrollmentId()
                    + ": the Mac is not enrolled (any more) or never checked in; see `macfleet mdm status " + machine.name() + "`");
        }
        if (version.equals(Optional.of(target.osVersion()))) {
            if (target.buildVersion().isEmpty() || target.buildVersion().equals(build)) {
                return new UpdateProgress(UpdateProgress.Phase.DONE, version, build, Optional.empty(), "on " + target.osVersion() + build.map(b -> " (" + b + ")").orElse(""));
            }
            InstallState state = status.installState().orElse(InstallState.NONE);
            if (state == InstallState.NONE || state == InstallState.FAILED) {
                return UpdateProgress.failed("came back on build " + build.orElse("?") + " instead of " + target.buildVersion().get(), version, build);
            }
        }
        InstallState state = status.installState().orElse(InstallState.NONE);
        String pending = status.pendingVersion().filter(p -> !p.nothingPending())
                .map(p -> ", pending " + p.osVersion() + " (" + p.buildVersion() + ")").orElse("");
        String detail = "install-state " + state.wire() + pending + ", on " + version.orElse("?") + " (" + build.orElse("?") + ")";
        return switch (state) {
            case FAILED -> UpdateProgress.failed(status.failureReason().flatMap(SoftwareUpdateStatus.FailureReason::reason)
                    .orElse("the Mac reports install-state failed without a reason"), version, build);
            case DOWNLOADING -> new UpdateProgress(UpdateProgress.Phase.DOWNLOADING, version, build, Optional.empty(), detail);
            case PREPARED -> new UpdateProgress(UpdateProgress.Phase.PREPARED, version, build, Optional.empty(), detail);
            case INSTALLING -> new UpdateProgress(UpdateProgress.Phase.INSTALLING, version, build, Optional.empty(), detail);
            case NONE, WAITING, UNRECOGNIZED -> new UpdateProgress(UpdateProgress.Phase.WAITING, version, build, Optional.empty(), detail);
        };
    }
}
