package io.macfleet.osupdate;

import io.macfleet.audit.AuditLog;
import io.macfleet.deployment.Launchctl;
import io.macfleet.inventory.Machine;
import io.macfleet.reach.MachineReach;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import java.io.IOException;
import java.time.Clock;

/**
 * The SSH side of a campaign's drain and undrain: stopping the cluster's inference daemon so it cannot serve while
 * nodes differ, and starting it again. The daemon is disabled as well as booted out, because launchd loads every plist
 * of /Library/LaunchDaemons at boot and an update restarts the Mac: a booted-out but enabled daemon would be serving
 * again on the new version while its peers are still on the old one.
 */
final class NodeShell implements AutoCloseable {
    private final SshRun run;

    NodeShell(SshSettings settings, HostKeyStore hostKeys, AuditLog audit, Clock clock) {
        this.run = new SshTransport(settings, hostKeys, audit, clock).openRun();
    }

    CommandResult execute(Machine machine, Command command) {
        return run.execute(MachineReach.of(machine).ssh(), command);
    }

    /** Whether launchd has the daemon loaded now. */
    boolean loaded(Machine machine, String label) throws IOException {
        return Launchctl.loaded(launchctl(machine), label);
    }

    /** Disables the daemon (so a restart does not load it) and boots it out when loaded. */
    void stop(Machine machine, String label, boolean loaded) {
        execute(machine, Command.sudo(PrivilegedProgram.LAUNCHCTL, "disable", "system/" + label)).requireSuccess();
        if (loaded) {
            CommandResult bootout = execute(machine, Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootout", "system/" + label));
            // 113: already gone (a resumed drain that had booted it out before the crash).
            if (bootout.exitStatus() == null || bootout.exitStatus() != 113) {
                bootout.requireSuccess();
            }
        }
    }

    /** Enables the daemon again and, when drain stopped it, loads it from its plist (left as it is when loaded already). */
    void start(Machine machine, String label, boolean wasLoaded) throws IOException {
        if (wasLoaded) {
            Launchctl.enableAndBootstrap(launchctl(machine), label);
        } else {
            Launchctl.enable(launchctl(machine), label);
        }
    }

    private Launchctl.Runner launchctl(Machine machine) {
        return Launchctl.over(command -> execute(machine, command));
    }

    /** Answers over SSH now. */
    boolean reachable(Machine machine) {
        try {
            return execute(machine, Command.reading("sw_vers", "-productVersion")).succeeded();
        } catch (SshException | IllegalArgumentException e) {
            return false;
        }
    }

    @Override
    public void close() {
        run.close();
    }
}
