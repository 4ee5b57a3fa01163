package io.macfleet.console;

import io.macfleet.fleet.MachineRow;
import io.macfleet.fleet.FleetStatus;
import static io.macfleet.console.ConsoleSupport.query;

import io.macfleet.audit.AuditEntry;
import io.macfleet.cabling.CablingReport;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.Machine;
import io.macfleet.provision.RunView;
import io.macfleet.ssh.StoredHostKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** A machine's page model: a pure function of the fleet state and what was recorded about the machine. */
final class MachinePage {

    private MachinePage() {
    }

    /**
     * @param recorded the host key recorded on first contact, if any
     * @param audit the machine's newest audit entries
     * @param runs the newest provisioning runs that included it
     * @return empty when the applied inventory has no such machine
     */
    static Optional<Pages.Machine> machine(Pages.Layout layout, FleetStatus.Fleet fleet, String name, Optional<StoredHostKey> recorded,
                                           List<AuditEntry> audit, List<RunView.Run> runs) {
        Optional<MachineRow> found = fleet.machine(name);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        MachineRow row = found.get();
        Machine machine = fleet.inventory().machine(name).orElseThrow();
        FactsObservation observation = fleet.observations().get(name);
        MachineFacts facts = observation == null ? null : observation.facts();
        String target = row.cluster() == null ? null : fleet.cluster(row.cluster()).map(FleetStatus.ClusterSummary::targetMacos).orElse(null);
        List<Drift.Difference> drift = facts == null ? List.of() : Drift.compare(machine, target, facts).differences();
        CablingReport report = row.cluster() == null ? null : fleet.cabling().get(row.cluster());
        List<Pages.FindingView> findings = report == null ? List.of() : report.findings().stream()
                .filter(finding -> finding.machines().contains(name)).map(Pages.FindingView::of).toList();
        Pages.HostKey hostKey = new Pages.HostKey(machine.ssh().hostKey(),
                recorded.map(StoredHostKey::keyType).orElse(null), recorded.map(StoredHostKey::fingerprint).orElse(null),
                recorded.map(key -> Ages.utc(key.recordedAt())).orElse(null), recorded.map(StoredHostKey::address).orElse(null));
        return Optional.of(new Pages.Machine(layout, row, String.valueOf(machine.ssh().port()),
                facts == null ? null : Ages.utc(facts.observedAt()), facts == null ? null : Ages.ago(facts.observedAt(), fleet.at()),
                facts == null ? List.of() : facts(facts), drift, facts == null ? List.of() : ports(facts), findings, hostKey,
                audit.stream().map(Pages.AuditRow::of).toList(), "/console/audit" + query(Map.of("machine", name)),
                runs.stream().map(RunPage::summary).toList()));
    }

    private static List<Pages.Fact> facts(MachineFacts facts) {
        List<Pages.Fact> list = new ArrayList<>();
        list.add(new Pages.Fact("Model", facts.modelName() + " (" + facts.modelIdentifier() + ")"));
        list.add(new Pages.Fact("Chip", facts.chip() + ", " + facts.cpuCores() + " CPU cores"
                + (facts.performanceCores() == null ? "" : " (" + facts.performanceCores() + " performance, " + facts.efficiencyCores() + " efficiency)")
                + ", " + facts.gpuCores() + " GPU cores"));
        list.add(new Pages.Fact("Memory", facts.memoryGigabytes() + " GB"));
        list.add(new Pages.Fact("Serial number", facts.serialNumber()));
        list.add(new Pages.Fact("Hardware UUID", facts.hardwareUuid()));
        list.add(new Pages.Fact("macOS", facts.macosVersion() + " (" + facts.macosBuild() + ")"));
        list.add(new Pages.Fact("RDMA", facts.rdmaEnabled() ? "enabled" + (facts.rdmaDevices().isEmpty() ? ", no devices" : ": " + String.join(", ", facts.rdmaDevices())) : "disabled"));
        list.add(new Pages.Fact("Thunderbolt Bridge", facts.thunderboltBridgeActive() ? "active (must be off for RDMA)" : "off"));
        list.add(new Pages.Fact("Bootstrap token", !facts.read(io.macfleet.facts.FactsGatherer.BOOTSTRAP_TOKEN_FACT) ? "unknown (unreadable)"
                : (facts.bootstrapTokenSupportedOnServer() ? "supported by the MDM server" : "not supported by the MDM server")
                + ", " + (facts.bootstrapTokenEscrowed() ? "escrowed" : "not escrowed")));
        list.add(new Pages.Fact("Uptime", facts.read(io.macfleet.facts.FactsGatherer.UPTIME_FACT) ? duration(facts.uptimeSeconds()) : "unknown (unreadable)"));
        list.add(new Pages.Fact("Free disk (/)", String.format(Locale.ROOT, "%.1f GB", facts.freeDiskBytes() / 1e9)));
        // An optional fact that could not be read costs only itself; say which and why.
        facts.unreadableFacts().forEach((fact, reason) -> list.add(new Pages.Fact("Unreadable: " + fact, reason)));
        return list;
    }

    private static String duration(long seconds) {
        long days = seconds / 86400;
        long hours = seconds % 86400 / 3600;
        long minutes = seconds % 3600 / 60;
        return (days > 0 ? days + " d " : "") + (days > 0 || hours > 0 ? hours + " h " : "") + minutes + " min";
    }

    private static List<Pages.Port> ports(MachineFacts facts) {
        return facts.thunderboltPorts().stream().map(port -> new Pages.Port(port.port(), port.interfaceName() == null ? "" : port.interfaceName(),
                port.connected() ? "connected" : "empty",
                port.speedGbps() == null ? "" : String.format(Locale.ROOT, "%.0f Gb/s", port.speedGbps()),
                port.peerMachine(), port.peerPort(), port.peerModel() == null ? "" : port.peerModel(),
                String.join(", ", port.otherDevices()))).toList();
    }
}
