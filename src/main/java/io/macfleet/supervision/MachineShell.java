package io.macfleet.supervision;

import io.macfleet.deployment.RemoteShell;
import io.macfleet.ssh.Command;
import java.io.IOException;
import java.time.Duration;

/** Runs one command on a machine of a cluster, bounded in time: the supervisor's only way onto the Macs. */
@FunctionalInterface
public interface MachineShell {

    /**
     * @throws TimedOut when the command did not answer within {@code timeout} (a wedged {@code ibv_devinfo})
     * @throws IOException when the machine could not be reached
     */
    RemoteShell.Answer run(String machine, Command command, Duration timeout) throws IOException;

    /** The command did not answer in time. */
    final class TimedOut extends IOException {
        public TimedOut(String message) {
            super(message);
        }
    }
}
