package io.macfleet.supervision;

import io.macfleet.deployment.RemoteShell;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/**
 * The supervisor's commands over macfleet's SSH transport (pinned host keys, sudo allow-list, every command
 * audited), on one long-lived run whose connections are reopened when a machine comes back from a reboot.
 */
public final class SshMachineShell implements MachineShell, AutoCloseable {

    private final SshRun run;
    private final ExecutionLimits limits;
    private final Map<String, SshTarget> targets;

    public SshMachineShell(SshTransport transport, Map<String, SshTarget> targets) {
        this.run = transport.openRun();
        this.limits = transport.settings().limits();
        this.targets = Map.copyOf(targets);
    }

    @Override
    public RemoteShell.Answer run(String machine, Command command, Duration timeout) throws IOException {
        SshTarget target = targets.get(machine);
        if (target == null) {
            throw new IOException("no SSH target for machine " + machine + " in the applied inventory");
        }
        try {
            CommandResult result = run.execute(target, command, limits.withCommandTimeout(timeout));
            return new RemoteShell.Answer(result.exitStatus() == null ? -1 : result.exitStatus(), result.stdout(), result.stderr());
        } catch (SshException.Timeout e) {
            throw new TimedOut(e.getMessage());
        } catch (SshException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        run.close();
    }
}
