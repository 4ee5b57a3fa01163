package io.macfleet.provision;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.PrivilegedProgram;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code type: thunderbolt-network} (machine scope): gives each cable of the machine's checked cluster its
 * point-to-point IPv4 address on the machine's end, through the cable's network service ({@code Thunderbolt N}, the
 * hardware port the interface belongs to) with {@code networksetup -setmanual}. The addresses are those of
 * {@link PeerConfiguration} ({@code cabling config --format macfleet}), computed from the cluster's stored facts, so the
 * step belongs after a {@code cabling} step, which refreshes them. networksetup, not {@code ifconfig}: its setting is
 * the network service's configuration, which survives a reboot and a replugged cable.
 */
final class ThunderboltNetworkStep implements StepDefinition {

    private static final String NETWORKSETUP = PrivilegedProgram.NETWORKSETUP.path();

    /** The step type {@code thunderbolt-network}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("thunderbolt-network", Parameters.class, (parameters, files) -> new ThunderboltNetworkStep());
        }
    }

    /** No parameters: the addresses come from the checked cabling, never from the playbook. */
    record Parameters() {
    }

    /** One cable end of this machine: the service to configure and the address it should have. */
    private record CableEnd(PeerConfiguration.PeerLink link) {
        String service() {
            return "Thunderbolt " + link.port();
        }

        String describe(String machine) {
            return machine + " port Thunderbolt " + link.port() + " (" + link.networkInterface() + ", cable to " + link.peer() + ")";
        }
    }

    /** What this machine's cable ends need, or why that cannot be known. */
    private record Wanted(List<CableEnd> ends, Optional<String> problem) {
    }

    @Override
    public boolean hasAction() {
        return true;
    }

    @Override
    public CheckResult check(MachineContext context) {
        Wanted wanted = wanted(context);
        if (wanted.problem().isPresent()) {
            return CheckResult.notSatisfied(wanted.problem().get());
        }
        if (wanted.ends().isEmpty()) {
            return CheckResult.satisfied(context.machine() + " has no cable in its cluster's checked cabling: nothing to configure");
        }
        List<String> wrong = new ArrayList<>();
        List<String> right = new ArrayList<>();
        for (CableEnd end : wanted.ends()) {
            ServiceState state = read(context, end);
            if (state.missing().isPresent()) {
                return CheckResult.notSatisfied(state.missing().get());
            }
            if (state.configured(end)) {
                right.add(end.service() + " " + end.link().localAddress());
            } else {
                wrong.add(end.service() + " (" + end.link().networkInterface() + ") is " + state.summary() + ", wants manual "
                        + end.link().localAddress() + "/" + PeerConfiguration.PREFIX_LENGTH);
            }
        }
        if (!wrong.isEmpty()) {
            return CheckResult.notSatisfied(context.machine() + ": " + String.join("; ", wrong));
        }
        return CheckResult.satisfied(context.machine() + ": " + String.join(", ", right) + " (netmask " + PeerConfiguration.NETMASK + ")");
    }

    @Override
    public String act(MachineContext context) {
        Wanted wanted = wanted(context);
        if (wanted.problem().isPresent()) {
            throw new StepFailedException(wanted.problem().get());
        }
        List<String> done = new ArrayList<>();
        for (CableEnd end : wanted.ends()) {
            ServiceState state = read(context, end);
            if (state.missing().isPresent()) {
                throw new StepFailedException(state.missing().get());
            }
            if (state.configured(end)) {
                continue;
            }
            CommandResult result = context.execute(new CommandSpec(List.of(NETWORKSETUP, "-setmanual", end.service(),
                    end.link().localAddress(), PeerConfiguration.NETMASK), true, null), false, false);
            if (!result.succeeded()) {
                throw new StepFailedException(end.describe(context.machine()) + ": `" + result.command().display() + "` exited with "
                        + result.exitStatus() + ": " + firstLine(result));
            }
            done.add(end.service() + " " + end.link().localAddress() + "/" + PeerConfiguration.PREFIX_LENGTH);
        }
        return done.isEmpty() ? "nothing to change" : "set " + String.join(", ", done);
    }

    /** The cluster's checked cabling from the stored facts, and this machine's ends of its cables. */
    private static Wanted wanted(MachineContext context) {
        if (context.cluster() == null) {
            return new Wanted(List.of(), Optional.of(context.machine() + " is in no cluster: there is no cabling to give addresses to"));
        }
        String cluster = context.cluster().name();
        try {
            ClusterCabling.Cluster observed = new ClusterCabling(context.factsService()).cluster(cluster, Map.of());
            CablingReport report = observed.check();
            List<String> errors = report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR)
                    .map(Finding::message).toList();
            if (!errors.isEmpty()) {
                return new Wanted(List.of(), Optional.of("the cabling of " + cluster + " fails its check (" + String.join("; ", errors)
                        + "); fix it (macfleet cabling check " + cluster + ") before its Thunderbolt addresses are set"));
            }
            List<CableEnd> ends = PeerConfiguration.from(report, observed.facts()).links().stream()
                    .filter(link -> link.machine().equals(context.machine())).map(CableEnd::new).toList();
            return new Wanted(ends, Optional.empty());
        } catch (IllegalStateException | IllegalArgumentException e) {
            // PeerConfiguration names the machine and port whose interface networksetup does not list.
            return new Wanted(List.of(), Optional.of("cannot assign the Thunderbolt addresses of " + cluster + ": " + e.getMessage()));
        }
    }

    /** What {@code networksetup -getinfo SERVICE} says, or that the service does not exist. */
    record ServiceState(Optional<String> missing, String configuration, String address, String netmask) {
        boolean configured(CableEnd end) {
            return configuration.equals("Manual Configuration") && address.equals(end.link().localAddress())
                    && netmask.equals(PeerConfiguration.NETMASK);
        }

        String summary() {
            return configuration.isEmpty() ? "unreadable" : configuration + " " + (address.isEmpty() ? "none" : address)
                    + (netmask.isEmpty() ? "" : " mask " + netmask);
        }
    }

    private static ServiceState read(MachineContext context, CableEnd end) {
        CommandResult result = context.execute(new CommandSpec(List.of(NETWORKSETUP, "-getinfo", end.service()), false, null), true, false);
        if (!result.succeeded() || result.stdout().contains("** Error")) {
            return new ServiceState(Optional.of(end.describe(context.machine()) + ": networksetup has no network service \"" + end.service()
                    + "\" (" + firstLine(result) + "); add it in System Settings > Network (or sudo networksetup -createnetworkservice \""
                    + end.service() + "\" " + end.link().networkInterface() + ") and run the playbook again"), "", "", "");
        }
        return parseGetInfo(result.stdout());
    }

    /**
     * Reads {@code networksetup -getinfo}: the first non-empty line names the configuration ("Manual Configuration",
     * "DHCP Configuration"), then {@code Key: value} lines; "none" is no address.
     */
    static ServiceState parseGetInfo(String output) {
        String configuration = "";
        String address = "";
        String netmask = "";
        for (String raw : output.lines().toList()) {
            String line = raw.strip();
            if (line.isEmpty()) {
                continue;
            }
            if (configuration.isEmpty() && line.endsWith("Configuration")) {
                configuration = line;
            } else if (line.startsWith("IP address:")) {
                address = line.substring("IP address:".length()).strip();
            } else if (line.startsWith("Subnet mask:")) {
                netmask = line.substring("Subnet mask:".length()).strip();
            }
        }
        if (address.equals("none")) {
            address = "";
        }
        return new ServiceState(Optional.empty(), configuration, address, netmask);
    }

    private static String firstLine(CommandResult result) {
        String text = (result.stderr().isBlank() ? result.stdout() : result.stderr()).strip();
        return text.isEmpty() ? "no output" : text.lines().filter(line -> !line.isBlank()).reduce((a, b) -> a + " " + b).orElse(text);
    }
}
