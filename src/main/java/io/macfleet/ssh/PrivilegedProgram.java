package io.macfleet.ssh;

import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The allow-list of programs macfleet runs with {@code sudo -n}, by absolute path. A command for any other
 * program with sudo is refused before anything is sent. The machines' sudoers rules should grant the
 * macfleet user exactly these (NOPASSWD), so the list here and the list on the Mac say the same thing.
 */
public enum PrivilegedProgram {
    /** Bootstrap token escrow status, installed profiles. */
    PROFILES("/usr/bin/profiles"),
    /** Sleep and power settings of inference nodes. */
    PMSET("/usr/bin/pmset"),
    /** Remote login, time zone, restart after power failure. */
    SYSTEMSETUP("/usr/sbin/systemsetup"),
    /** Network service order and addresses of the Thunderbolt bridge. */
    NETWORKSETUP("/usr/sbin/networksetup"),
    /** macOS updates. */
    SOFTWAREUPDATE("/usr/sbin/softwareupdate"),
    /** Loading and unloading the inference node's launch daemon. */
    LAUNCHCTL("/bin/launchctl"),
    /** The effective SSH server settings ({@code sshd -T} needs the host keys, so root). */
    SSHD("/usr/sbin/sshd"),
    /** Installing rendered configuration files (sshd drop-ins, launch daemons) owned by root. */
    INSTALL("/usr/bin/install"),
    /**
     * Giving a model file placed by the placement relays to root:wheel (on a Mac the relay, a root daemon, made it
     * root's already; this makes sure whatever the previous owner, so the SSH user cannot replace what the node loads).
     */
    CHOWN("/usr/sbin/chown"),
    /** Creating the inference node's own daemon account ({@code _macfleet}) in the local directory. */
    DSCL("/usr/bin/dscl"),
    /** Installing a package (the Java runtime the inference node needs). */
    INSTALLER("/usr/sbin/installer"),
    /** Restarts after updates. */
    SHUTDOWN("/sbin/shutdown"),
    /** Package power and thermal pressure for the health metrics (it reads the SMC and power counters, so root). */
    POWERMETRICS("/usr/bin/powermetrics");

    private final String path;

    PrivilegedProgram(String path) {
        this.path = path;
    }

    public String path() {
        return path;
    }

    public static Optional<PrivilegedProgram> forPath(String path) {
        return Arrays.stream(values()).filter(program -> program.path.equals(path)).findFirst();
    }

    public static Set<String> paths() {
        return Arrays.stream(values()).map(PrivilegedProgram::path).collect(Collectors.toUnmodifiableSet());
    }
}
