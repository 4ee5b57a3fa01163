package io.macfleet.osupdate.ssh;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.VolumeOwner;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.osupdate.PreflightFinding;
import io.macfleet.osupdate.PreflightResult;
import io.macfleet.osupdate.StartResult;
import io.macfleet.osupdate.UpdateProgress;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshSettings;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ssh update method against simulated Macs (real SSH servers answering softwareupdate, diskutil and dscl as a
 * Mac does): a 4-Mac cluster from 26.1 to 26.2 ends on one version and build; an account that is not a volume
 * owner, a wrong password, a full disk and a target Software Update does not offer are refused with the machine
 * named; the password is never in any process's arguments on the Mac nor in the audit log.
 */
class SshUpdateMethodTest {
    private static final String PASSWORD = "correct-horse-battery-staple";
    private static final String PASSWORD_VARIABLE = "MACFLEET_TEST_VOLUME_OWNER_PASSWORD";
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"));
    private static final OsUpdateTarget TARGET = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.of(2026, 12, 1, 2, 0));

    @TempDir
    static Path directory;
    static SimulatedFleet fleet;
    static Path privateKey;
    static final List<AuditEvent> audit = new CopyOnWriteArrayList<>();
    static SshUpdateMethod method;

    @BeforeAll
    static void start() throws Exception {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
        KeyPair key = SshKeys.generate();
        privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "osupdate-ssh-test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic())
                .rebootDuration(Duration.ofMillis(300)).latestRelease("26.2").volumeOwner("admin", PASSWORD);
        for (int index = 1; index <= 8; index++) {
            builder.macStudio("studio-0" + index, 512, "26.1");
        }
        fleet = builder.build().start();
        fleet.machine("studio-05").addAccountWithoutVolumeOwnership("operator", "operator-password");
        fleet.machine("studio-06").changeVolumeOwnerPassword("changed-on-the-mac");
        fleet.machine("studio-07").faults().setDiskFull(true);
        SshSettings settings = SshSettings.defaults("test").withAcceptNewHostKeys(true)
                .withLimits(new ExecutionLimits(Duration.ofSeconds(5), Duration.ofSeconds(20), 1024 * 1024))
                .withEnvironment(Map.of(PASSWORD_VARIABLE, PASSWORD));
        AuditLog log = audit::add;
        method = new SshUpdateMethod(settings, new InMemoryHostKeyStore(), log, SshUpdateMethod.Requirements.DEFAULTS);
    }

    @AfterAll
    static void stop() {
        fleet.close();
    }

    static Machine machine(String name, String volumeOwnerUser) {
        SimulatedFleet.Endpoint endpoint = fleet.endpoint(name);
        return new Machine(name, endpoint.host(), new io.macfleet.inventory.SshSettings(fleet.sshUser(), endpoint.port(),
                SecretReference.of("file:" + privateKey), null, null), null, "Mac15,14", 512, Machine.Role.WORKER, "cluster-a", List.of(), null,
                volumeOwnerUser == null ? null : new VolumeOwner(volumeOwnerUser, SecretReference.of("env:" + PASSWORD_VARIABLE)), Map.of());
    }

    @Test
    void aFourMacClusterEndsOnTheSameVersionAndBuildAndThePasswordIsNeverShown() throws Exception {
        List<Machine> cluster = List.of(machine("studio-01", "admin"), machine("studio-02", "admin"), machine("studio-03", "admin"),
                machine("studio-04", "admin"));
        for (Machine machine : cluster) {
            PreflightResult preflight = method.preflight(machine, TARGET);
            assertThat(preflight.findings()).as(machine.name()).isEmpty();
            assertThat(preflight.osVersion()).contains("26.1");
            assertThat(preflight.buildVersion()).contains("25B78");
        }
        List<StartResult> started = new ArrayList<>();
        try (ExecutorService together = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<StartResult>> futures = cluster.stream().map(machine -> together.submit(() -> method.start(machine, TARGET))).toList();
            for (Future<StartResult> future : futures) {
                started.add(future.get());
            }
        }
        for (StartResult result : started) {
            assertThat(result.failure()).as(result.machine()).isEmpty();
            assertThat(result.actions()).singleElement().satisfies(action -> assertThat(action.subject())
                    .isEqualTo("sudo -n -- /usr/sbin/softwareupdate --install 'macOS Tahoe 26.2-25C56' --restart --agree-to-license --user admin --stdinpass"
                            + " < <secret on standard input>"));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<UpdateProgress> progress;
        do {
            Thread.sleep(200);
            progress = cluster.stream().map(machine -> method.progress(machine, TARGET)).toList();
        } while (progress.stream().anyMatch(each -> each.phase() != UpdateProgress.Phase.DONE) && System.nanoTime() < deadline);
        assertThat(progress).allSatisfy(each -> {
            assertThat(each.phase()).isEqualTo(UpdateProgress.Phase.DONE);
            assertThat(each.osVersion()).contains("26.2");
            assertThat(each.buildVersion()).contains("25C56");
        });

        // Repeating start (a resume after a crash) sends nothing to a Mac that is already there.
        int before = fleet.machine("studio-01").processArguments().size();
        assertThat(method.start(cluster.getFirst(), TARGET).actions()).isEmpty();
        assertThat(fleet.machine("studio-01").processArguments().subList(before, fleet.machine("studio-01").processArguments().size()))
                .noneMatch(arguments -> arguments.contains("--install"));

        for (Machine machine : cluster) {
            List<String> seen = fleet.machine(machine.name()).processArguments();
            assertThat(seen).as("what %s ran", machine.name()).anyMatch(arguments -> arguments.contains("softwareupdate --install"));
            assertThat(seen).as("the password in an argument on %s", machine.name()).noneMatch(arguments -> arguments.contains(PASSWORD));
        }
        assertThat(audit).isNotEmpty().noneMatch(event -> event.detail().contains(PASSWORD));
        assertThat(audit).anyMatch(event -> event.detail().contains("--stdinpass < <secret on standard input>"));
    }

    @Test
    void anAccountThatIsNotAVolumeOwnerIsRefusedBeforeAndAtTheInstallNamingTheMachine() {
        Machine machine = machine("studio-05", "operator");
        PreflightResult preflight = method.preflight(machine, TARGET);
        assertThat(preflight.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.check()).isEqualTo(PreflightFinding.Check.VOLUME_OWNER);
            assertThat(finding.machine()).isEqualTo("studio-05");
            assertThat(finding.problem()).startsWith("studio-05: account 'operator'").contains("is not a volume owner");
            assertThat(finding.fix()).contains("Volume Owner: Yes");
        });
        StartResult start = method.start(machine, TARGET);
        assertThat(start.failure()).hasValueSatisfying(failure -> assertThat(failure)
                .startsWith("studio-05: softwareupdate refused the volume owner's credentials (user 'operator'")
                .contains("nothing was installed").doesNotContain(PASSWORD));
        assertThat(fleet.machine("studio-05").snapshot().releaseAfterReboot()).isNull();
        assertThat(method.progress(machine, TARGET).osVersion()).contains("26.1");
    }

    @Test
    void aWrongPasswordPassesThePreflightButIsRefusedAtTheInstallWithNothingInstalled() {
        Machine machine = machine("studio-06", "admin");
        assertThat(method.preflight(machine, TARGET).findings()).as("a password cannot be checked without using it").isEmpty();
        StartResult start = method.start(machine, TARGET);
        assertThat(start.failure()).hasValueSatisfying(failure -> assertThat(failure)
                .startsWith("studio-06: softwareupdate refused the volume owner's credentials (user 'admin', password from env:" + PASSWORD_VARIABLE + ")")
                .contains("the password is wrong").contains("Failed to authenticate"));
        assertThat(fleet.machine("studio-06").snapshot().releaseAfterReboot()).isNull();
        assertThat(fleet.machine("studio-06").processArguments()).noneMatch(arguments -> arguments.contains(PASSWORD));
    }

    @Test
    void aMachineWithoutVolumeOwnerCredentialsAFullDiskOrATargetNotOfferedFailsThePreflight() {
        PreflightResult noOwner = method.preflight(machine("studio-07", null), TARGET);
        assertThat(noOwner.findings()).extracting(PreflightFinding::check)
                .containsExactly(PreflightFinding.Check.VOLUME_OWNER, PreflightFinding.Check.FREE_DISK);
        assertThat(noOwner.findings().getFirst().problem()).startsWith("studio-07 has no volume owner in the inventory")
                .contains("cannot be authorized without a volume owner's password");
        assertThat(noOwner.findings().get(1).problem()).startsWith("studio-07 has 0.0 GB free on /");

        PreflightResult otherBuild = method.preflight(machine("studio-05", "admin"), new OsUpdateTarget("26.2", Optional.of("25C57"), TARGET.installBy()));
        assertThat(otherBuild.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.check()).isEqualTo(PreflightFinding.Check.TARGET_OFFERED);
            assertThat(finding.problem()).isEqualTo("studio-05: Software Update does not offer macOS 26.2 (25C57) (it offers macOS Tahoe 26.2-25C56);"
                    + " over SSH only what Software Update offers now can be installed, no build of one's choosing");
        });
        PreflightResult major = method.preflight(machine("studio-05", "admin"), new OsUpdateTarget("27.0", Optional.empty(), TARGET.installBy()));
        assertThat(major.findings()).extracting(PreflightFinding::check).containsExactly(PreflightFinding.Check.TARGET_OFFERED);
        assertThat(major.findings().getFirst().problem()).contains("major upgrade").contains("label macos-installer");
    }

    @Test
    void aMajorUpgradeRunsTheLabelledInstallerWhosePathHasSpacesUnderSudo() {
        Machine plain = machine("studio-05", "admin");
        Machine labelled = new Machine(plain.name(), plain.address(), plain.ssh(), null, plain.model(), plain.memoryGb(), plain.role(), plain.cluster(),
                List.of(), null, plain.volumeOwner(), Map.of(SshUpdateMethod.INSTALLER_LABEL, "/Applications/Install macOS Tahoe.app/Contents/Resources/startosinstall"));
        PreflightResult major = method.preflight(labelled, new OsUpdateTarget("27.0", Optional.empty(), TARGET.installBy()));
        assertThat(major.findings()).as("startosinstall --usage answers under sudo -n from the labelled path").isEmpty();
        assertThat(audit).anyMatch(event -> event.detail().startsWith(
                "sudo -n -- '/Applications/Install macOS Tahoe.app/Contents/Resources/startosinstall' --usage"));
    }

    @Test
    void aMacThatIsOffCannotBeUpdatedOverSsh() {
        Machine machine = machine("studio-08", "admin");
        fleet.powerOff("studio-08");
        try {
            PreflightResult preflight = method.preflight(machine, TARGET);
            assertThat(preflight.findings()).singleElement().satisfies(finding -> {
                assertThat(finding.check()).isEqualTo(PreflightFinding.Check.REACHABLE);
                assertThat(finding.problem()).startsWith("studio-08 is not reachable over SSH");
                assertThat(finding.fix()).contains("nothing can be done for a Mac that is off");
            });
            assertThat(method.progress(machine, TARGET).phase()).isEqualTo(UpdateProgress.Phase.UNKNOWN);
        } finally {
            fleet.powerOn("studio-08");
        }
    }
}
