package io.macfleet.ssh;

import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.util.concurrent.Callable;

/** {@code macfleet ssh ...}: operator actions on the SSH layer's state. */
@Command(name = "ssh", mixinStandardHelpOptions = true, description = "SSH host keys.",
        subcommands = {SshCommand.ForgetHostKey.class})
public class SshCommand {

    @Command(name = "forget-host-key", mixinStandardHelpOptions = true,
            description = {"Forget the recorded host key of a machine, after its new key was verified out of band.",
                    "The next contact with --accept-new-host-keys records the key the machine presents then."})
    public static class ForgetHostKey implements Callable<Integer> {

        @Parameters(paramLabel = "MACHINE", description = "Machine name as in the inventory.")
        String machine;

        @Spec
        CommandSpec spec;

        // Looked up lazily: the database is configured by the foundation, and a missing one is a clear
        // error here rather than a failed application start for every command.
        @Inject
        Instance<DataSource> dataSources;

        HostKeyStore hostKeys;

        public ForgetHostKey() {
        }

        ForgetHostKey(HostKeyStore hostKeys) {
            this.hostKeys = hostKeys;
        }

        @Override
        public Integer call() {
            HostKeyStore store = hostKeys;
            if (store == null) {
                if (dataSources == null || !dataSources.isResolvable()) {
                    throw CommandException.usage("no database is configured");
                }
                store = new JdbcHostKeyStore(dataSources.get());
            }
            if (!store.forget(machine)) {
                throw CommandException.usage("no host key is recorded for " + machine);
            }
            spec.commandLine().getOut().println("Forgot the host key of " + machine
                    + ". Connect with --accept-new-host-keys to record the one it presents now.");
            return ExitCodes.OK;
        }
    }
}
