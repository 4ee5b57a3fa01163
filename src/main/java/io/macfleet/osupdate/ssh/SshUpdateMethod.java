package io.macfleet.osupdate.ssh;

import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.facts.FactsParseException;
import io.macfleet.facts.SimpleOutputParsers;
import io.macfleet.facts.SoftwareVersion;
import io.macfleet.facts.SystemOutputParsers;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.VolumeOwner;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.osupdate.PreflightFinding;
import io.macfleet.osupdate.PreflightFinding.Check;
import io.macfleet.osupdate.PreflightResult;
import io.macfleet.osupdate.StartResult;
import io.macfleet.osupdate.UpdateMethod;
import io.macfleet.osupdate.UpdateProgress;
import io.macfleet.osupdate.Versions;
import io.macfleet.osupdate.ssh.SoftwareUpdateListing.OfferedUpdate;
import io.macfleet.reach.MachineReach;
import io.macfleet.secrets.SecretUnavailableException;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code ssh} way of updating a Mac, for fleets without MDM: {@code softwareupdate --install LABEL --restart
 * --agree-to-license --user U --stdinpass} for an update within the major version, {@code startosinstall
 * --agreetolicense --forcequitapps --user U --stdinpass} from a full installer for a major upgrade, both under
 * {@code sudo -n}, with the inventory's volume owner and the password on standard input only (never an argument:
 * every local user sees every process's arguments).
 *
 * <p>What SSH cannot do, and the preflight says so: it installs only what Software Update offers the Mac now (no
 * build of one's choosing); it does nothing for a Mac that is off; it cannot authorize anything without a volume
 * owner's password (on Apple silicon {@code sudo} alone is refused); and it cannot check that password without
 * using it ({@code dscl -authonly} takes it as an argument), so a wrong password shows at {@link #start}, where
 * {@code softwareupdate} refuses after downloading and before installing anything.
 */
@ApplicationScoped
public class SshUpdateMethod implements UpdateMethod {
    public static final String NAME = "ssh";
    /** The machine label naming the full installer's startosinstall for a major upgrade (inventory {@code labels:}). */
    public static final String INSTALLER_LABEL = "macos-installer";

    static final Command SOFTWARE_VERSION = Command.reading("sw_vers");
    static final Command DISK_FREE = Command.reading("df", "-k", "/");
    static final Command LIST_UPDATES = Command.reading("softwareupdate", "--list");
    static final Command CRYPTO_USERS = Command.reading("diskutil", "apfs", "listCryptoUsers", "/");

    /**
     * @param minorFreeBytes free space on / a minor update needs (a 2.8 GB update asked for 17.13 GB in a real refusal)
     * @param majorFreeBytes free space a major upgrade needs
     * @param listTimeout how long {@code softwareupdate --list} may take (it asks Apple's servers)
     * @param installTimeout how long the install command may take, download included
     */
    public record Requirements(long minorFreeBytes, long majorFreeBytes, Duration listTimeout, Duration installTimeout) {
        private static final long GIGABYTE = 1_000_000_000L;
        public static final Requirements DEFAULTS = new Requirements(25 * GIGABYTE, 45 * GIGABYTE, Duration.ofMinutes(5), Duration.ofHours(3));
    }

    private final SshSettings settings;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;
    private final Requirements requirements;

    @Inject
    public SshUpdateMethod(JdbcHostKeyStore hostKeys, JdbcAuditLog audit) {
        this(SshSettings.defaults("os-update"), hostKeys, audit, Requirements.DEFAULTS);
    }

    public SshUpdateMethod(SshSettings settings, HostKeyStore hostKeys, AuditLog audit, Requirements requirements) {
        this.settings = settings;
        this.hostKeys = hostKeys;
        this.audit = audit;
        this.requirements = requirements;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PreflightResult preflight(Machine machine, OsUpdateTarget target) {
        List<PreflightFinding> findings = new ArrayList<>();
        SshTarget ssh;
        try {
            ssh = MachineReach.of(machine).ssh();
        } catch (IllegalArgumentException e) {
            findings.add(new PreflightFinding(machine.name(), Check.REACHABLE, e.getMessage(), "correct " + machine.name() + "'s ssh settings in the inventory"));
            return new PreflightResult(machine.name(), Optional.empty(), Optional.empty(), findings);
        }
        try (SshRun run = openRun(machine)) {
            SoftwareVersion current;
            try {
                current = SimpleOutputParsers.softwareVersion(run.execute(ssh, SOFTWARE_VERSION).requireSuccess().stdout());
            } catch (SshException e) {
                findings.add(new PreflightFinding(machine.name(), Check.REACHABLE, machine.name() + " is not reachable over SSH: " + e.getMessage(),
                        "power " + machine.name() + " on and check its network and SSH (macfleet ssh check " + machine.name()
                                + "); over SSH nothing can be done for a Mac that is off"));
                return new PreflightResult(machine.name(), Optional.empty(), Optional.empty(), findings);
            } catch (FactsParseException e) {
                findings.add(new PreflightFinding(machine.name(), Check.CURRENT_VERSION, machine.name() + ": " + e.getMessage(),
                        "look at `sw_vers` on " + machine.name()));
                return new PreflightResult(machine.name(), Optional.empty(), Optional.empty(), findings);
            }
            Optional<String> version = Optional.of(current.productVersion());
            Optional<String> build = Optional.of(current.buildVersion());
            PreflightResult onTarget = new PreflightResult(machine.name(), version, build, List.of());
            if (onTarget.alreadyOnTarget(target)) {
                return onTarget;
            }
            if (Versions.compare(current.productVersion(), target.osVersion()) > 0) {
                findings.add(new PreflightFinding(machine.name(), Check.CURRENT_VERSION, machine.name() + " runs macOS " + current.productVersion()
                        + " (" + current.buildVersion() + "), newer than the target " + target.osVersion() + ": macOS cannot be downgraded in place",
                        "choose a target at least " + current.productVersion() + " for the whole cluster"));
                return new PreflightResult(machine.name(), version, build, findings);
            }
            boolean major = major(target.osVersion()) > major(current.productVersion());
            checkVolumeOwner(run, ssh, machine, findings);
            checkFreeDisk(run, ssh, machine, major, findings);
            if (major) {
                checkInstaller(run, ssh, machine, target, findings);
            } else {
                checkOffered(run, ssh, machine, target, findings);
            }
            return new PreflightResult(machine.name(), version, build, findings);
        }
    }

    private void checkVolumeOwner(SshRun run, SshTarget ssh, Machine machine, List<PreflightFinding> findings) {
        String name = machine.name();
        VolumeOwner owner = machine.volumeOwner();
        if (owner == null || owner.user() == null || owner.password() == null) {
            findings.add(new PreflightFinding(name, Check.VOLUME_OWNER, name + " has no volume owner in the inventory (volumeOwner.user and "
                    + "volumeOwner.password): on Apple silicon an update over SSH cannot be authorized without a volume owner's password",
                    "add `volumeOwner: {user: NAME, password: env:MACFLEET_…}` to " + name + " (or its group or defaults), or update through MDM (--via mdm)"));
            return;
        }
        try {
            password(owner);
        } catch (SecretUnavailableException e) {
            findings.add(new PreflightFinding(name, Check.VOLUME_OWNER, name + ": the volume owner's password cannot be read: " + e.getMessage(),
                    "make " + owner.password() + " readable by macfleet (an env:MACFLEET_… variable or a file: under the secrets directory)"));
            return;
        }
        try {
            CommandResult account = run.execute(ssh, Command.reading("dscl", ".", "-read", "/Users/" + owner.user(), "GeneratedUID"));
            if (!account.succeeded()) {
                findings.add(new PreflightFinding(name, Check.VOLUME_OWNER, name + " has no local account '" + owner.user() + "' (dscl: "
                        + firstLine(account.stderr() + account.stdout()) + ")", "name an existing volume owner account of " + name + " in volumeOwner.user"));
                return;
            }
            String generatedUid = CryptoUsers.generatedUid(account.stdout());
            List<CryptoUsers.CryptoUser> users = CryptoUsers.parse(run.execute(ssh, CRYPTO_USERS).requireSuccess().stdout());
            if (!CryptoUsers.volumeOwner(users, generatedUid)) {
                findings.add(new PreflightFinding(name, Check.VOLUME_OWNER, name + ": account '" + owner.user() + "' (GeneratedUID " + generatedUid
                        + ") is not a volume owner of the startup disk (`diskutil apfs listCryptoUsers /` does not list it as one), so it cannot authorize an update",
                        "name an account listed with 'Volume Owner: Yes' in volumeOwner.user (on Apple silicon the first administrator made in Setup"
                                + " Assistant is one), or give '" + owner.user() + "' a secure token on the Mac with an existing volume owner"));
            }
        } catch (SshException | IllegalArgumentException e) {
            findings.add(new PreflightFinding(name, Check.VOLUME_OWNER, name + ": could not check the volume owner: " + e.getMessage(),
                    "run `dscl . -read /Users/" + owner.user() + " GeneratedUID` and `diskutil apfs listCryptoUsers /` on " + name + " and compare"));
        }
    }

    private void checkFreeDisk(SshRun run, SshTarget ssh, Machine machine, boolean major, List<PreflightFinding> findings) {
        long needed = major ? requirements.majorFreeBytes() : requirements.minorFreeBytes();
        try {
            long free = SystemOutputParsers.freeDiskBytes(run.execute(ssh, DISK_FREE).requireSuccess().stdout());
            if (free < needed) {
                findings.add(new PreflightFinding(machine.name(), Check.FREE_DISK, String.format(Locale.ROOT,
                        "%s has %.1f GB free on /, a %s needs at least %.0f GB", machine.name(), free / 1e9, major ? "major upgrade" : "minor update", needed / 1e9),
                        "free space on " + machine.name() + "'s startup disk (old models, caches), then plan again"));
            }
        } catch (SshException | FactsParseException e) {
            findings.add(new PreflightFinding(machine.name(), Check.FREE_DISK, machine.name() + ": could not read the free disk space: " + e.getMessage(),
                    "run `df -k /` on " + machine.name()));
        }
    }

    private void checkOffered(SshRun run, SshTarget ssh, Machine machine, OsUpdateTarget target, List<PreflightFinding> findings) {
        try {
            List<OfferedUpdate> offered = offered(run, ssh);
            if (matching(offered, target).isEmpty()) {
                List<String> macos = offered.stream().filter(OfferedUpdate::macos).map(OfferedUpdate::label).toList();
                findings.add(new PreflightFinding(machine.name(), Check.TARGET_OFFERED, machine.name() + ": Software Update does not offer macOS "
                        + describe(target) + " (it offers " + (macos.isEmpty() ? "no macOS update" : String.join(", ", macos))
                        + "); over SSH only what Software Update offers now can be installed, no build of one's choosing",
                        "choose a target Software Update offers every node (--to VERSION --build BUILD), wait until Apple offers it, or use MDM (--via mdm)"));
            }
        } catch (SshException | IllegalArgumentException e) {
            findings.add(new PreflightFinding(machine.name(), Check.TARGET_OFFERED, machine.name() + ": could not list the updates Software Update offers: "
                    + e.getMessage(), "run `softwareupdate --list` on " + machine.name()));
        }
    }

    private void checkInstaller(SshRun run, SshTarget ssh, Machine machine, OsUpdateTarget target, List<PreflightFinding> findings) {
        Optional<String> installer = installer(machine);
        if (installer.isEmpty()) {
            findings.add(new PreflightFinding(machine.name(), Check.TARGET_OFFERED, machine.name() + ": macOS " + target.osVersion()
                    + " is a major upgrade, which over SSH runs startosinstall from a full installer, and the inventory names none (label "
                    + INSTALLER_LABEL + ")", "fetch the installer on the Mac (softwareupdate --fetch-full-installer --full-installer-version "
                    + target.osVersion() + ") and set labels: {" + INSTALLER_LABEL + ": \"/Applications/Install macOS NAME.app/Contents/Resources/startosinstall\"}"));
            return;
        }
        try {
            CommandResult usage = run.execute(ssh, Command.builder(installer.get()).sudo().argument("--usage").idempotent().build());
            if (!usage.succeeded()) {
                findings.add(new PreflightFinding(machine.name(), Check.TARGET_OFFERED, machine.name() + ": the installer " + installer.get()
                        + " does not run (" + firstLine(usage.stderr() + usage.stdout()) + ")", "fetch the full installer of macOS " + target.osVersion()
                        + " on " + machine.name() + " and allow its startosinstall in sudoers (NOPASSWD) for the macfleet user"));
            }
        } catch (SshException | IllegalArgumentException e) {
            findings.add(new PreflightFinding(machine.name(), Check.TARGET_OFFERED, machine.name() + ": could not run the installer: " + e.getMessage(),
                    "check the " + INSTALLER_LABEL + " label of " + machine.name()));
        }
    }

    @Override
    public StartResult start(Machine machine, OsUpdateTarget target) {
        String name = machine.name();
        UpdateProgress now = progress(machine, target);
        if (now.phase() == UpdateProgress.Phase.DONE) {
            // Already there (a repeated start after a crash): nothing is sent again.
            return StartResult.started(name, List.of());
        }
        if (now.phase() == UpdateProgress.Phase.FAILED || now.phase() == UpdateProgress.Phase.UNKNOWN) {
            return StartResult.failed(name, List.of(), now.detail());
        }
        VolumeOwner owner = machine.volumeOwner();
        if (owner == null || owner.user() == null || owner.password() == null) {
            return StartResult.failed(name, List.of(), name + ": no volume owner in the inventory; an update over SSH cannot be authorized without one");
        }
        String password;
        try {
            password = password(owner);
        } catch (SecretUnavailableException e) {
            return StartResult.failed(name, List.of(), name + ": the volume owner's password cannot be read: " + e.getMessage());
        }
        SshTarget ssh = MachineReach.of(machine).ssh();
        boolean major = now.osVersion().map(version -> major(target.osVersion()) > major(version)).orElse(false);
        try (SshRun run = openRun(machine)) {
            Command install;
            if (major) {
                Optional<String> installer = installer(machine);
                if (installer.isEmpty()) {
                    return StartResult.failed(name, List.of(), name + ": a major upgrade needs the " + INSTALLER_LABEL + " label naming startosinstall");
                }
                install = Command.builder(installer.get()).sudo().arguments("--agreetolicense", "--forcequitapps", "--user", owner.user(), "--stdinpass")
                        .standardInput(password + "\n").build();
            } else {
                Optional<OfferedUpdate> update;
                try {
                    update = matching(offered(run, ssh), target);
                } catch (SshException | IllegalArgumentException e) {
                    return StartResult.failed(name, List.of(), name + ": could not list the updates Software Update offers: " + e.getMessage());
                }
                if (update.isEmpty()) {
                    return StartResult.failed(name, List.of(), name + ": Software Update no longer offers macOS " + describe(target));
                }
                install = Command.builder(PrivilegedProgram.SOFTWAREUPDATE.path()).sudo()
                        .arguments("--install", update.get().label(), "--restart", "--agree-to-license", "--user", owner.user(), "--stdinpass")
                        .standardInput(password + "\n").build();
            }
            List<StartResult.Action> actions = List.of(new StartResult.Action("remote-program", install.display(), true));
            CommandResult result;
            try {
                result = run.execute(ssh, install, new ExecutionLimits(settings.limits().connectTimeout(), requirements.installTimeout(),
                        settings.limits().maxOutputBytes()));
            } catch (SshException.ConnectionDropped e) {
                if (e.commandSent()) {
                    // softwareupdate --restart and startosinstall restart the Mac; the connection may go before the exit status.
                    return StartResult.started(name, actions);
                }
                return StartResult.failed(name, List.of(), name + ": " + e.getMessage());
            } catch (SshException e) {
                return StartResult.failed(name, actions, name + ": " + e.getMessage());
            }
            String output = result.stdout() + "\n" + result.stderr();
            String program = major ? "startosinstall" : "softwareupdate";
            if (output.contains("Failed to authenticate") || output.contains("failed to authorize")) {
                return StartResult.failed(name, actions, name + ": " + program + " refused the volume owner's credentials (user '" + owner.user()
                        + "', password from " + owner.password() + "): the password is wrong or '" + owner.user() + "' is not a volume owner ("
                        + firstLine(output.contains("Failed to authenticate") ? "Failed to authenticate" : result.stderr()) + "); nothing was installed."
                        + " Fix the password or the account, then resume");
            }
            if (output.contains("Not enough free disk space")) {
                return StartResult.failed(name, actions, name + ": " + program + " installed nothing: " + lineWith(output, "Not enough free disk space")
                        + " Free space on the startup disk, then resume");
            }
            if (!result.succeeded()) {
                return StartResult.failed(name, actions, name + ": `" + install.display() + "` exited with status " + result.exitStatus() + ": "
                        + firstLine(result.stderr().isBlank() ? result.stdout() : result.stderr()));
            }
            return StartResult.started(name, actions);
        }
    }

    @Override
    public UpdateProgress progress(Machine machine, OsUpdateTarget target) {
        String name = machine.name();
        SoftwareVersion current;
        try (SshRun run = openRun(machine)) {
            current = SimpleOutputParsers.softwareVersion(run.execute(MachineReach.of(machine).ssh(), SOFTWARE_VERSION).requireSuccess().stdout());
        } catch (SshException e) {
            return UpdateProgress.unknown(name + " does not answer over SSH (restarting into the update, or off): " + e.reason());
        } catch (FactsParseException | IllegalArgumentException e) {
            return UpdateProgress.unknown(name + ": " + e.getMessage());
        }
        Optional<String> version = Optional.of(current.productVersion());
        Optional<String> build = Optional.of(current.buildVersion());
        if (current.productVersion().equals(target.osVersion())) {
            if (target.buildVersion().isEmpty() || target.buildVersion().get().equals(current.buildVersion())) {
                return new UpdateProgress(UpdateProgress.Phase.DONE, version, build, Optional.empty(),
                        "macOS " + current.productVersion() + " (" + current.buildVersion() + ")");
            }
            return UpdateProgress.failed(name + " runs macOS " + current.productVersion() + " build " + current.buildVersion() + ", not the target build "
                    + target.buildVersion().get() + "; over SSH no other build can be chosen: use MDM (TargetBuildVersion) or a target of this build", version, build);
        }
        if (Versions.compare(current.productVersion(), target.osVersion()) > 0) {
            return UpdateProgress.failed(name + " runs macOS " + current.productVersion() + " (" + current.buildVersion() + "), past the target "
                    + describe(target), version, build);
        }
        return new UpdateProgress(UpdateProgress.Phase.WAITING, version, build, Optional.empty(),
                "still on macOS " + current.productVersion() + " (" + current.buildVersion() + ")");
    }

    private SshRun openRun(Machine machine) {
        Optional<String> installer = installer(machine);
        SshSettings effective = settings;
        if (installer.isPresent()) {
            // A full installer's path depends on its name; the Mac's sudoers must allow that startosinstall too.
            Set<String> allowed = new HashSet<>(settings.sudoAllowList());
            allowed.add(installer.get());
            effective = new SshSettings(settings.acceptNewHostKeys(), settings.limits(), settings.parallelism(), settings.actor(), allowed,
                    settings.environment());
        }
        return new SshTransport(effective, hostKeys, audit).openRun();
    }

    private List<OfferedUpdate> offered(SshRun run, SshTarget ssh) {
        CommandResult list = run.execute(ssh, LIST_UPDATES, new ExecutionLimits(settings.limits().connectTimeout(), requirements.listTimeout(),
                settings.limits().maxOutputBytes()));
        if (!list.succeeded()) {
            throw new IllegalArgumentException("`softwareupdate --list` exited with status " + list.exitStatus() + ": " + firstLine(list.stderr()));
        }
        return SoftwareUpdateListing.parse(list.stdout(), list.stderr());
    }

    private static Optional<OfferedUpdate> matching(List<OfferedUpdate> offered, OsUpdateTarget target) {
        return offered.stream().filter(OfferedUpdate::macos).filter(update -> update.version().equals(target.osVersion()))
                .filter(update -> target.buildVersion().isEmpty() || update.build().equals(target.buildVersion())).findFirst();
    }

    private static Optional<String> installer(Machine machine) {
        return Optional.ofNullable(machine.labels().get(INSTALLER_LABEL)).filter(path -> !path.isBlank());
    }

    private String password(VolumeOwner owner) {
        String value = owner.password().resolve(settings.environment());
        // A password file usually ends with a line break that is not part of the password.
        return value.endsWith("\r\n") ? value.substring(0, value.length() - 2) : value.endsWith("\n") ? value.substring(0, value.length() - 1) : value;
    }

    private static String describe(OsUpdateTarget target) {
        return target.osVersion() + target.buildVersion().map(build -> " (" + build + ")").orElse("");
    }

    static int major(String version) {
        return Integer.parseInt(version.split("\\.")[0]);
    }

    private static String firstLine(String text) {
        return text.strip().lines().findFirst().orElse("no output");
    }

    private static String lineWith(String text, String part) {
        return text.lines().filter(line -> line.contains(part)).findFirst().orElse(part).strip();
    }
}
