package io.macfleet.runtime;

import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet node upgrade CLUSTER}: the lockstep, drained and verified upgrade of a runtime's build ({@link RuntimeUpgrade}). */
@Command(name = "upgrade", mixinStandardHelpOptions = true,
        description = {"Upgrade CLUSTER's runtime (llama.cpp, mlx) to the build the applied inventory names (settings.build; mlxVersion and"
                + " mlxLmVersion), on every Mac together: install it beside the running build and verify its SHA-256 and version on each Mac"
                + " (Macs that would run different builds are refused, nothing changed), drain, start in order (rpc-servers before the"
                + " head), verify health and the build on every Mac; on failure roll back to the previous build.",
                "Change the inventory and apply it first; --dry-run prints each Mac's build now and after."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:upgraded (or nothing to do)", "1:failed (the message says whether it was rolled back)", "2:refused, nothing changed"})
public class RuntimeUpgradeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "CLUSTER", description = "A cluster of the applied inventory served by llama.cpp or mlx.")
    String cluster;

    @Option(names = "--dry-run", description = "Read each Mac's build and print it beside the inventory's, changing nothing.")
    boolean dryRun;

    @Mixin
    SshOptions ssh;

    @Inject
    RuntimeService runtimes;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        SshSettings settings;
        try {
            settings = ssh.settings(Actors.commandLine());
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        RuntimeUpgrade.Preview preview = runtimes.upgradePreview(cluster, settings);
        out.print(preview.text());
        out.flush();
        if (dryRun) {
            return ExitCodes.OK;
        }
        RuntimeUpgrade.Outcome outcome = runtimes.upgrade(cluster, settings, new NodeDeployer.Listener() {
            @Override
            public void step(String machine, String what) {
                synchronized (out) {
                    out.printf("  %-12s %s%n", machine, what);
                    out.flush();
                }
            }
        });
        out.println(outcome.summary());
        out.flush();
        return ExitCodes.OK;
    }
}
