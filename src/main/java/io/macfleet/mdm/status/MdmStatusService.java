package io.macfleet.mdm.status;

import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.facts.BootstrapTokenStatus;
import io.macfleet.facts.FactsParseException;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.MdmServer;
import io.macfleet.mdm.MdmAdapters;
import io.macfleet.mdm.MdmConnection;
import io.macfleet.mdm.EnrollmentState;
import io.macfleet.mdm.MdmServerException;
import io.macfleet.reach.MachineReach;
import io.macfleet.secrets.SecretUnavailableException;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code macfleet mdm status}: for each machine, its enrollment and bootstrap token as the MDM server sees them
 * (NanoHUB, read-only requests) and as the Mac reports them ({@code profiles status} over SSH).
 */
@ApplicationScoped
public class MdmStatusService {
    static final Command ENROLLMENT = Command.reading("profiles", "status", "-type", "enrollment");
    static final Command BOOTSTRAP_TOKEN = Command.reading("profiles", "status", "-type", "bootstraptoken");
    static final Duration SERVER_DEADLINE = Duration.ofSeconds(20);

    private final DesiredStateStore desiredState;
    private final FactsService facts;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;

    @Inject
    public MdmStatusService(DesiredStateStore desiredState, FactsService facts, JdbcHostKeyStore hostKeys, JdbcAuditLog audit) {
        this(desiredState, facts, (HostKeyStore) hostKeys, audit);
    }

    /** @param desiredState and facts: only for {@link #select} and {@link #server} */
    public MdmStatusService(DesiredStateStore desiredState, FactsService facts, HostKeyStore hostKeys, AuditLog audit) {
        this.desiredState = desiredState;
        this.facts = facts;
        this.hostKeys = hostKeys;
        this.audit = audit;
    }

    /**
     * The named machines of the applied inventory, or all of them.
     *
     * @throws FactsService.UnknownNameException naming the machines the applied inventory does not have (exit 2)
     */
    public List<Machine> select(List<String> names) {
        return facts.select(null, names);
    }

    public Optional<MdmServer> server() {
        return desiredState.mdm();
    }

    /** The status of each machine against the inventory's MDM server (a NanoHUB). */
    public List<MachineMdmStatus> status(List<Machine> machines, MdmServer server, SshSettings settings) {
        return status(machines, server, settings, mdm -> MdmAdapters.connect(mdm, SERVER_DEADLINE));
    }

    /**
     * @param clients makes the client of the server; its errors are reported on every machine
     */
    public List<MachineMdmStatus> status(List<Machine> machines, MdmServer server, SshSettings settings, Function<MdmServer, MdmConnection> clients) {
        Map<String, MachineMdmStatus.ServerView> seen = new LinkedHashMap<>();
        MdmConnection client = null;
        String clientProblem = null;
        try {
            client = clients.apply(server);
        } catch (IllegalArgumentException | SecretUnavailableException e) {
            clientProblem = "MDM server " + server.url() + ": " + e.getMessage();
        }
        try {
            for (Machine machine : machines) {
                seen.put(machine.name(), serverView(machine, server, client, clientProblem));
            }
        } finally {
            if (client != null) {
                client.close();
            }
        }
        Map<String, MachineMdmStatus.MacView> reported = macViews(machines, settings);
        return machines.stream().map(machine -> new MachineMdmStatus(machine.name(), machine.mdmEnrollmentId(), seen.get(machine.name()),
                reported.get(machine.name()))).toList();
    }

    private static MachineMdmStatus.ServerView serverView(Machine machine, MdmServer server, MdmConnection client, String clientProblem) {
        String described = client == null ? "MDM server " + server.url() : client.describe();
        if (clientProblem != null) {
            return new MachineMdmStatus.ServerView(described, null, null, null, clientProblem);
        }
        if (machine.mdmEnrollmentId() == null) {
            // Not an error: the inventory says the machine is not enrolled; the Mac's own answer still shows.
            return null;
        }
        try {
            EnrollmentState state = client.enrollment(machine.mdmEnrollmentId());
            return new MachineMdmStatus.ServerView(described, state.declarativeStatusSeen(), state.lastStatusReport().map(Object::toString).orElse(null),
                    state.bootstrapToken().name().toLowerCase(Locale.ROOT).replace('_', '-'), null);
        } catch (MdmServerException e) {
            return new MachineMdmStatus.ServerView(described, null, null, null, e.getMessage());
        }
    }

    private Map<String, MachineMdmStatus.MacView> macViews(List<Machine> machines, SshSettings settings) {
        Map<String, MachineMdmStatus.MacView> views = new LinkedHashMap<>();
        List<SshTarget> targets = new ArrayList<>();
        for (Machine machine : machines) {
            try {
                targets.add(MachineReach.of(machine).ssh());
            } catch (IllegalArgumentException e) {
                views.put(machine.name(), new MachineMdmStatus.MacView(null, null, null, null, machine.name() + ": " + e.getMessage()));
            }
        }
        try (SshRun run = new SshTransport(settings, hostKeys, audit).openRun()) {
            for (MachineResult<MachineMdmStatus.MacView> result : run.onFleet(targets, session -> {
                String enrollment = session.execute(ENROLLMENT).requireSuccess().stdout();
                BootstrapTokenStatus token = BootstrapTokenStatus.parse(session.execute(BOOTSTRAP_TOKEN).requireSuccess().stdout());
                return new MachineMdmStatus.MacView(yes(enrollment, "MDM enrollment:"), yes(enrollment, "Enrolled via DEP:"),
                        token.supportedOnServer(), token.escrowed(), null);
            })) {
                views.put(result.machine(), result.succeeded() ? result.value()
                        : new MachineMdmStatus.MacView(null, null, null, null, message(result.machine(), result.error())));
            }
        }
        return views;
    }

    private static String message(String machine, Exception error) {
        String text = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
        return text.contains(machine) ? text : machine + ": " + text;
    }

    /** "MDM enrollment: Yes (User Approved)" → true; a missing line → a parse error naming the command. */
    static Boolean yes(String output, String prefix) {
        for (String line : output.lines().toList()) {
            String text = line.strip();
            if (text.startsWith(prefix)) {
                return text.substring(prefix.length()).strip().toLowerCase(Locale.ROOT).startsWith("yes");
            }
        }
        throw new FactsParseException(ENROLLMENT.render(), "no '" + prefix + "' line");
    }
}
