package io.macfleet.models.placement;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.deployment.PrintingListener;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code macfleet model place CLUSTER NAME}: the catalogue's model onto every Mac of the cluster, sent once by this
 * host and passed on by the Macs over Thunderbolt. A subcommand of the {@code model} command group.
 */
@Command(name = "place", mixinStandardHelpOptions = true,
        description = {"Place the catalogue model NAME on every Mac of CLUSTER: this host sends it once, to the first Mac; the Macs"
                + " pass it on to each other over their Thunderbolt addresses while they receive it, each verifying its SHA-256 before"
                + " moving it into place. Macs that hold it already are skipped; free space is checked on every Mac first; an"
                + " interrupted placement resumes where it stopped."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:placed on every Mac (or held already)", "1:a Mac failed (the others finished) or a disk is too small", "2:bad input"})
public class ModelPlaceCommand implements Callable<Integer> {

    /** Made on first use: picocli creates every command of the tree, even for --version. */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "CLUSTER", description = "A cluster of the applied inventory.")
    String cluster;

    @Parameters(index = "1", paramLabel = "NAME", description = "A model of the catalogue (macfleet model list).")
    String name;

    @Mixin
    JsonOption json;

    @Option(names = "--port", paramLabel = "PORT", description = "The relays' TCP port on the Macs' own addresses (default: ${DEFAULT-VALUE}).")
    int port = PlacementEngine.DEFAULT_PORT;

    @Option(names = "--limit-rate", paramLabel = "MIB_PER_SECOND",
            description = "Send at most this many MiB/s from this host (default: as fast as the first Mac takes it), to leave room on the management network.")
    long limitRateMiB;

    @Mixin
    SshOptions ssh;

    @Inject
    ModelPlacement placement;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        SshSettings settings;
        try {
            settings = ssh.settings(Actors.commandLine());
            if (limitRateMiB < 0) {
                throw new IllegalArgumentException("--limit-rate must not be negative, got " + limitRateMiB);
            }
            placement.settings(PlacementEngine.Settings.defaults().withPort(port).withFeedBytesPerSecond(limitRateMiB << 20));
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        PlacementReport report = placement.place(cluster, name, settings, json.on() ? NodeDeployer.Listener.NONE : PrintingListener.inParts(out, 4));
        if (json.on()) {
            out.println(Json.MAPPER.writeValueAsString(PlacementBody.of(name, report)));
        } else {
            out.println(ModelPlacement.summary(name, report));
            for (PlacementReport.MacOutcome outcome : report.machines()) {
                out.printf(Locale.ROOT, "  %-12s %-16s %s%n", outcome.machine(), outcome.kind().name().toLowerCase(Locale.ROOT).replace('_', '-'),
                        outcome.message());
            }
        }
        out.flush();
        if (!report.succeeded()) {
            throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
        }
        return ExitCodes.OK;
    }
}
