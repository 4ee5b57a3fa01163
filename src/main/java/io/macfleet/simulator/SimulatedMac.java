package io.macfleet.simulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The mutable state of one simulated Mac. All state changes go through synchronized methods; readers take a
 * consistent {@link #snapshot()}.
 */
public final class SimulatedMac {
    private final MacSpec spec;
    private final String address;
    private final Path root;
    private final Path stateDirectory;
    private final Faults faults = new Faults();
    private final Launchd launchd;
    private final String sshUser;
    private final FileOwners fileOwners;
    private final LocalDirectory localDirectory;

    private MacosRelease release;
    private MacosRelease releaseAfterReboot;
    private boolean rdmaEnabled;
    private Boolean rdmaAfterReboot;
    private boolean bootstrapTokenEscrowed;
    private boolean mdmEnrolled;
    private boolean thunderboltBridgeActive = true;
    private PowerState power = PowerState.OFF;
    private Instant bootTime = Instant.now();
    private final Map<String, String> ipv4 = new LinkedHashMap<>();
    private final Map<String, String> powerSettings = new LinkedHashMap<>(MacosOutput.MAC_STUDIO_POWER_DEFAULTS);
    private final String volumeOwnerUser;
    private String volumeOwnerPassword;
    /** Local accounts without a secure token: dscl knows them, listCryptoUsers does not list them. */
    private final Map<String, String> otherAccounts = new java.util.concurrent.ConcurrentHashMap<>();

    SimulatedMac(MacSpec spec, String address, Path stateDirectory, MacosRelease release, String volumeOwnerUser,
                 String volumeOwnerPassword, String sshUser) {
        this.spec = Objects.requireNonNull(spec);
        this.address = address;
        this.stateDirectory = stateDirectory;
        this.root = stateDirectory.resolve("root");
        this.release = release;
        this.volumeOwnerUser = volumeOwnerUser;
        this.volumeOwnerPassword = volumeOwnerPassword;
        this.sshUser = sshUser;
        this.fileOwners = new FileOwners(sshUser);
        this.localDirectory = new LocalDirectory(sshUser, volumeOwnerUser);
        createFileSystem();
        this.launchd = new Launchd(this);
        ipv4.put("en0", address + "/24");
    }

    private void createFileSystem() {
        for (String directory : List.of("Library/LaunchDaemons", "usr/local/bin", "var/log", "etc", "Users/" + volumeOwnerUser, "tmp")) {
            try {
                Files.createDirectories(root.resolve(directory));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the file system of " + spec.name() + " under " + root, e);
            }
        }
        writeIfMissing("etc/ssh/sshd_config.d/100-macos.conf", MacosOutput.SSHD_CONFIG_D_MACOS);
        installJava();
    }

    /**
     * Back to how the Mac was delivered (`macfleet demo reset`), while it is off: this release, RDMA off, the Thunderbolt
     * Bridge on, no bootstrap token, default power settings, no faults, and a fresh file system (what provisioning and
     * deployments wrote is gone). The SSH host key stays.
     */
    synchronized void restoreAsDelivered(MacosRelease delivered) {
        release = delivered;
        releaseAfterReboot = null;
        rdmaEnabled = false;
        rdmaAfterReboot = null;
        bootstrapTokenEscrowed = false;
        mdmEnrolled = false;
        thunderboltBridgeActive = true;
        String management = ipv4.get("en0");
        ipv4.clear();
        ipv4.put("en0", management);
        powerSettings.clear();
        powerSettings.putAll(MacosOutput.MAC_STUDIO_POWER_DEFAULTS);
        faults.clear();
        fileOwners.clear();
        localDirectory.clear();
        try (var paths = Files.walk(root)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear the file system of " + spec.name() + " under " + root, e);
        }
        createFileSystem();
    }

    /** What {@code ps} would have shown to any local user: the command lines and programs' arguments this Mac ran (the newest 2,000). */
    private final java.util.Deque<String> processArguments = new java.util.ArrayDeque<>();

    synchronized void recordProcess(String arguments) {
        if (processArguments.size() == 2_000) {
            processArguments.removeFirst();
        }
        processArguments.addLast(arguments);
    }

    /** The command lines and program arguments this Mac ran, oldest first: what every local user could see with {@code ps}. */
    public synchronized List<String> processArguments() {
        return List.copyOf(processArguments);
    }

    public MacSpec spec() {
        return spec;
    }

    public String name() {
        return spec.name();
    }

    /** The address its SSH server listens on (stands for the Mac's LAN address, en0). */
    public String address() {
        return address;
    }

    /** The private directory that stands for this Mac's file system ("/"). */
    public Path root() {
        return root;
    }

    public Path stateDirectory() {
        return stateDirectory;
    }

    public Faults faults() {
        return faults;
    }

    public Launchd launchd() {
        return launchd;
    }

    /** The account macfleet logs in as (SFTP and every command without sudo run as it). */
    String sshUser() {
        return sshUser;
    }

    /** Owners and modes of this Mac's files (what stat shows; what the SSH user may change). */
    FileOwners fileOwners() {
        return fileOwners;
    }

    /** The local directory's users and groups (dscl). */
    LocalDirectory localDirectory() {
        return localDirectory;
    }

    /** The owner, group and mode of a file of this Mac, as {@code stat -f '%Su:%Sg %Lp'} prints them (e.g. "root:wheel 644"). */
    public String ownerOf(String macPath) {
        FileOwners.Owner owner = fileOwners.of(resolve(macPath));
        return owner.user() + ":" + owner.group() + " " + owner.modeOctal();
    }

    /** Whether the local directory has this user (dscl . -read /Users/NAME answers). */
    public boolean userExists(String user) {
        return localDirectory.user(user).isPresent() || accountExists(user);
    }

    public String volumeOwnerUser() {
        return volumeOwnerUser;
    }

    synchronized boolean volumeOwnerPasswordMatches(String user, String password) {
        return volumeOwnerUser.equals(user) && volumeOwnerPassword.equals(password);
    }

    /** The volume owner's password changes (as when a person changes it on the Mac): the old one no longer authorizes. */
    public synchronized void changeVolumeOwnerPassword(String password) {
        this.volumeOwnerPassword = Objects.requireNonNull(password, "password");
    }

    /** Adds a local account that is not a volume owner (no secure token): it exists, but cannot authorize an update. */
    public void addAccountWithoutVolumeOwnership(String user, String password) {
        otherAccounts.put(user, password);
    }

    boolean accountExists(String user) {
        if (localDirectory != null && localDirectory.user(user).isPresent()) {
            return true;
        }
        return volumeOwnerUser.equals(user) || otherAccounts.containsKey(user);
    }

    /** Maps a macOS absolute path into the private root; refuses paths that escape it. */
    public Path resolve(String macPath) {
        String relative = macPath.startsWith("/") ? macPath.substring(1) : "Users/" + volumeOwnerUser + "/" + macPath;
        Path resolved = root.resolve(relative).normalize();
        if (!resolved.startsWith(root)) {
            throw new IllegalArgumentException("path escapes the simulated file system: " + macPath);
        }
        return resolved;
    }

    public synchronized Snapshot snapshot() {
        return new Snapshot(spec, address, release, releaseAfterReboot, rdmaEnabled, rdmaAfterReboot, bootstrapTokenEscrowed,
                mdmEnrolled, thunderboltBridgeActive, power, bootTime, Map.copyOf(ipv4),
                java.util.Collections.unmodifiableMap(new LinkedHashMap<>(powerSettings)));
    }

    /** A consistent view of the state at one moment. */
    public record Snapshot(MacSpec spec, String address, MacosRelease release, MacosRelease releaseAfterReboot,
                           boolean rdmaEnabled, Boolean rdmaAfterReboot, boolean bootstrapTokenEscrowed,
                           boolean mdmEnrolled, boolean thunderboltBridgeActive, PowerState power, Instant bootTime,
                           Map<String, String> ipv4, Map<String, String> powerSettings) {
    }

    public synchronized PowerState power() {
        return power;
    }

    synchronized void setPower(PowerState power) {
        this.power = power;
    }

    /** What happens at boot: pending RDMA and OS changes take effect, the clock restarts. */
    synchronized void boot() {
        if (rdmaAfterReboot != null) {
            rdmaEnabled = rdmaAfterReboot;
            rdmaAfterReboot = null;
        }
        if (releaseAfterReboot != null) {
            release = releaseAfterReboot;
            releaseAfterReboot = null;
        }
        bootTime = Instant.now();
        power = PowerState.ON;
        // A reboot is the only cure for a wedged RDMA stack.
        faults.setRdmaWedged(false);
    }

    public synchronized void setRelease(MacosRelease release) {
        this.release = release;
    }

    /** The release the Mac boots into at its next restart (an installed update). */
    public synchronized void stageRelease(MacosRelease release) {
        this.releaseAfterReboot = release;
    }

    public synchronized void setRdmaEnabled(boolean enabled) {
        this.rdmaEnabled = enabled;
    }

    synchronized void stageRdma(boolean enabled) {
        this.rdmaAfterReboot = enabled;
    }

    public synchronized void setBootstrapTokenEscrowed(boolean escrowed) {
        this.bootstrapTokenEscrowed = escrowed;
    }

    public synchronized void setMdmEnrolled(boolean enrolled) {
        this.mdmEnrolled = enrolled;
    }

    public synchronized void setThunderboltBridgeActive(boolean active) {
        this.thunderboltBridgeActive = active;
    }

    /**
     * Changes power management settings as {@code pmset -a} does; they live in the Mac's preferences and so survive
     * reboots.
     *
     * @throws IllegalArgumentException for a setting a Mac Studio does not have or a value that is not a number
     */
    public synchronized void setPowerSetting(String name, String value) {
        if (!powerSettings.containsKey(name)) {
            throw new IllegalArgumentException("a Mac Studio has no power setting '" + name + "'; it has " + powerSettings.keySet());
        }
        if (!value.matches("\\d+")) {
            throw new IllegalArgumentException("power setting " + name + " takes a number, got '" + value + "'");
        }
        powerSettings.put(name, value);
    }

    /**
     * A JDK 25 as installed from a package: /usr/bin/java runs the simulator's own Java runtime, so a launch daemon
     * that starts /usr/bin/java on this Mac runs a real JVM. {@link #removeJava()} makes a Mac without Java.
     */
    public void installJava() {
        Path java = root.resolve("usr/bin/java");
        try {
            Files.createDirectories(java.getParent());
            Files.writeString(java, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java") + "' \"$@\"\n");
            java.toFile().setExecutable(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install Java on " + spec.name(), e);
        }
    }

    public void removeJava() {
        try {
            Files.deleteIfExists(root.resolve("usr/bin/java"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove Java from " + spec.name(), e);
        }
    }

    public boolean hasJava() {
        return Files.isRegularFile(root.resolve("usr/bin/java"));
    }

    private void writeIfMissing(String macPath, String content) {
        Path file = root.resolve(macPath);
        try {
            if (!Files.exists(file)) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, content);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + macPath + " on " + spec.name(), e);
        }
    }

    /** Sets the IPv4 address ("169.254.10.1/16") of an interface, or removes it with null. */
    public synchronized void setIpv4(String interfaceName, String addressWithPrefix) {
        if (addressWithPrefix == null) {
            ipv4.remove(interfaceName);
        } else {
            if (!addressWithPrefix.matches("\\d+\\.\\d+\\.\\d+\\.\\d+/\\d+")) {
                throw new IllegalArgumentException("expected an IPv4 address with prefix like 169.254.10.1/16, got " + addressWithPrefix);
            }
            ipv4.put(interfaceName, addressWithPrefix);
        }
    }
}
