package io.macfleet.mdm.status;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.MdmServer;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet mdm}: the fleet's MDM server as macfleet sees it. */
@Command(name = "mdm", mixinStandardHelpOptions = true, description = "The fleet's MDM server (the inventory's mdm: section).",
        subcommands = {MdmCommand.Status.class})
public class MdmCommand {

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Per machine: enrolled or not, enrollment id, bootstrap token and last status report as the MDM server sees them,"
                    + " and enrollment and bootstrap token as the Mac reports them (profiles status over SSH).",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:every machine's status was read from the server and the Mac, and every one is enrolled",
                    "1:the MDM server or a Mac could not be read, or a machine is not enrolled (standard error names which)",
                    "2:usage error (unknown machine, no mdm: section in the applied inventory)"})
    static class Status implements Callable<Integer> {
        private static final ObjectMapper JSON = new ObjectMapper();

        @Spec
        CommandSpec spec;

        @Parameters(arity = "0..*", paramLabel = "MACHINE", description = "Machines (default: every machine of the inventory).")
        List<String> machines = new ArrayList<>();

        @Mixin
        SshOptions ssh;

        @Mixin
        JsonOption json;

        @Inject
        MdmStatusService service;

        @Override
        public Integer call() throws JsonProcessingException {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            SshSettings settings;
            List<Machine> selected;
            try {
                settings = ssh.settings(Actors.commandLine());
                selected = service.select(machines);
            } catch (IllegalArgumentException | io.macfleet.facts.FactsService.UnknownNameException e) {
                throw CommandException.usage(e.getMessage());
            }
            Optional<MdmServer> server = service.server();
            if (server.isEmpty()) {
                throw CommandException.usage("the applied inventory has no mdm: section (url and apiToken of the fleet's NanoHUB)");
            }
            if (selected.isEmpty()) {
                throw CommandException.usage("no machines in the applied inventory");
            }
            List<MachineMdmStatus> statuses = service.status(selected, server.get(), settings);
            if (json.on()) {
                out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(Map.of("server", server.get().url(), "machines", statuses)));
            } else {
                out.println("MDM server: " + server.get().url());
                for (MachineMdmStatus status : statuses) {
                    out.println(line(status));
                }
            }
            out.flush();
            long failed = statuses.stream().filter(status -> status.failed() || status.notEnrolled()).count();
            for (MachineMdmStatus status : statuses) {
                if (status.notEnrolled()) {
                    err.println("macfleet mdm status: " + status.machine() + ": not enrolled ("
                            + (status.mac() != null && Boolean.FALSE.equals(status.mac().enrolled()) ? "the Mac reports no MDM enrollment" : "the server has no status report from "
                            + status.enrollmentId()) + "); enroll it (Automated Device Enrollment, supervised) and check that mdm.enrollmentId is its UDID");
                }
                if (status.server() != null && status.server().error() != null) {
                    err.println("macfleet mdm status: " + status.machine() + ": " + status.server().error());
                }
                if (status.mac() != null && status.mac().error() != null) {
                    err.println("macfleet mdm status: " + status.mac().error());
                }
            }
            err.flush();
            if (failed > 0) {
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            return ExitCodes.OK;
        }

        static String line(MachineMdmStatus status) {
            MachineMdmStatus.ServerView server = status.server();
            MachineMdmStatus.MacView mac = status.mac();
            String serverText = server == null ? "server: not asked (no mdm.enrollmentId in the inventory)"
                    : server.error() != null ? "server: ERROR (see below)"
                    : "server: " + (Boolean.TRUE.equals(server.statusReportsReceived()) ? "status reports received" : "no status report")
                    + (server.lastStatusReport() == null ? "" : ", last " + server.lastStatusReport())
                    + ", bootstrap token " + server.bootstrapToken();
            String macText = mac == null || mac.error() != null ? "Mac: ERROR (see below)"
                    : "Mac: " + (mac.enrolled() ? "enrolled" + (mac.automatedDeviceEnrollment() ? " (ADE)" : "") : "NOT enrolled")
                    + ", bootstrap token " + (mac.bootstrapTokenEscrowed() ? "escrowed" : mac.bootstrapTokenSupportedOnServer() ? "NOT escrowed" : "not supported by the server");
            return String.format(Locale.ROOT, "%-16s %-38s %s; %s", status.machine(), status.enrollmentId() == null ? "(no enrollment id)" : status.enrollmentId(),
                    serverText, macText);
        }
    }
}
