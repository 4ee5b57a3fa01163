package io.macfleet.deployment;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.PrivilegedProgram;
import java.io.IOException;
import java.util.function.Function;

/**
 * launchctl(1)'s commands for a daemon of the system domain, over whatever runs a command on the Mac (an SSH run, a
 * deployment's session, the supervisor's bounded shell): the one place that knows launchd's answers.
 */
public final class Launchctl {

    /** Runs one command on the Mac and says how it ended; a Mac that cannot be reached is the runner's exception. */
    @FunctionalInterface
    public interface Runner {
        RemoteShell.Answer run(Command command) throws IOException;
    }

    /** launchctl answered with a failure: the message names the command, its exit status and what it wrote to standard error. */
    public static final class Refused extends IOException {
        private final int exitStatus;

        Refused(String command, RemoteShell.Answer answer) {
            super(command + " failed (exit " + answer.exitStatus() + "): " + answer.stderr().strip());
            this.exitStatus = answer.exitStatus();
        }

        public int exitStatus() {
            return exitStatus;
        }
    }

    /** {@code print} of a label launchd does not know: "Could not find service ... in domain for system" (exit 113). */
    private static final int NOT_LOADED = 113;
    /**
     * {@code bootstrap} of a service that is loaded already: "Bootstrap failed: 5: Input/output error". launchd answers 5
     * for other failures too (an unreadable plist), so a 5 means "already loaded" only when {@code print} then finds it.
     */
    private static final int INPUT_OUTPUT_ERROR = 5;

    private Launchctl() {
    }

    /** A runner over macfleet's SSH results: a signal, a missing exit status or truncated output count as exit -1. */
    public static Runner over(Function<Command, CommandResult> execute) {
        return command -> {
            CommandResult result = execute.apply(command);
            int exitStatus = result.succeeded() ? 0 : result.exitStatus() == null || result.exitStatus() == 0 ? -1 : result.exitStatus();
            return new RemoteShell.Answer(exitStatus, result.stdout(), result.stderr());
        };
    }

    /** Enables {@code system/LABEL}: launchd loads it at boot again and accepts a bootstrap of it. */
    public static void enable(Runner runner, String label) throws IOException {
        require(runner.run(Command.sudo(PrivilegedProgram.LAUNCHCTL, "enable", "system/" + label)), "launchctl enable system/" + label);
    }

    /**
     * Enables the daemon, then loads it from its plist under {@link LaunchDaemon#DAEMON_DIRECTORY}. It is enabled first
     * because a drain (OS update) or a coordinated reboot leaves it disabled, and launchd refuses to load a disabled
     * service ("Bootstrap failed: 119: Service is disabled"); a daemon that is loaded already is left running.
     */
    public static void enableAndBootstrap(Runner runner, String label) throws IOException {
        enable(runner, label);
        String plist = LaunchDaemon.DAEMON_DIRECTORY + label + ".plist";
        RemoteShell.Answer bootstrap = runner.run(Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootstrap", "system", plist));
        if (bootstrap.exitStatus() == INPUT_OUTPUT_ERROR && loaded(runner, label)) {
            return;
        }
        require(bootstrap, "launchctl bootstrap system " + plist);
    }

    /** Whether launchd has {@code system/LABEL} loaded now: {@code print} exits 0 when it does, 113 when it does not know it. */
    public static boolean loaded(Runner runner, String label) throws IOException {
        RemoteShell.Answer printed = runner.run(Command.reading("launchctl", "print", "system/" + label));
        if (printed.exitStatus() == NOT_LOADED) {
            return false;
        }
        require(printed, "launchctl print system/" + label);
        return true;
    }

    private static void require(RemoteShell.Answer answer, String command) throws Refused {
        if (answer.exitStatus() != 0) {
            throw new Refused(command, answer);
        }
    }
}
