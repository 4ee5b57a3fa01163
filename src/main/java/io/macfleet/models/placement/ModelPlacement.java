package io.macfleet.models.placement;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.ModelCatalogue;
import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.runtime.RuntimeRefused;
import io.macfleet.runtime.RuntimeService;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Places a catalogue model (or any verified files) on every Mac of a cluster of the applied inventory, the bytes sent
 * once by this host and passed on by the Macs over their Thunderbolt addresses ({@link PlacementEngine}). The cluster's
 * machines, rank order and Thunderbolt addresses come from {@link RuntimeService#cluster}, as the runtimes' plans do.
 * {@code model place} and {@code node deploy} come through here; each placement is one audit entry ({@code model.place}).
 */
@ApplicationScoped
public class ModelPlacement implements io.macfleet.deployment.ModelFanOut {

    private final RuntimeService runtimes;
    private final ModelCatalogue catalogue;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;
    private final Clock clock;
    private volatile PlacementEngine.Settings settings = PlacementEngine.Settings.defaults();

    @Inject
    public ModelPlacement(RuntimeService runtimes, ModelCatalogue catalogue, JdbcHostKeyStore hostKeys, JdbcAuditLog audit) {
        this(runtimes, catalogue, hostKeys, audit, Clock.systemUTC());
    }

    public ModelPlacement(RuntimeService runtimes, ModelCatalogue catalogue, HostKeyStore hostKeys, AuditLog audit, Clock clock) {
        this.runtimes = runtimes;
        this.catalogue = catalogue;
        this.hostKeys = hostKeys;
        this.audit = audit;
        this.clock = clock;
    }

    /** The relays' port and chunk size (tests and benchmarks pick a free port). */
    public void settings(PlacementEngine.Settings newSettings) {
        this.settings = newSettings;
    }

    /** The catalogue's model by name; an unknown name is refused as bad input. */
    public PlacementReport place(String cluster, String modelName, SshSettings ssh, NodeDeployer.Listener listener) {
        CatalogueModel model = catalogue.find(modelName).orElseThrow(() -> PlacementRefused.badInput("no model named '" + modelName
                + "' in the catalogue (macfleet model list shows them; macfleet model add NAME SOURCE adds one)"));
        return place(cluster, model, ssh, listener);
    }

    public PlacementReport place(String cluster, CatalogueModel model, SshSettings ssh, NodeDeployer.Listener listener) {
        Optional<String> heldOn = catalogue.heldOn(model.name());
        if (heldOn.isPresent()) {
            throw PlacementRefused.badInput("model " + model.name() + " is held on " + heldOn.get() + " (model add --via), not on this host:"
                    + " feeding the chain from a Mac is not built yet (nothing was sent)");
        }
        List<PlacedFile> files = model.files().stream().map(file -> PlacedFile.of(model, file, catalogue.localFile(model, file))).toList();
        return place(cluster, model.name(), files, ssh, listener);
    }

    /** Any verified files (the model named {@code what} in the audit entry). */
    public PlacementReport place(String cluster, String what, List<PlacedFile> files, SshSettings ssh, NodeDeployer.Listener listener) {
        List<RuntimeCluster.Machine> machines;
        try {
            machines = runtimes.cluster(cluster, Optional.empty(), Optional.empty()).machines();
        } catch (RuntimeRefused unknown) {
            throw PlacementRefused.badInput(unknown.getMessage());
        }
        try (SshRun run = new SshTransport(ssh, hostKeys, audit, clock).openRun()) {
            PlacementReport report = new PlacementEngine(settings).place(run, cluster, machines, files, listener);
            record(ssh.actor(), cluster, summary(what, report), report.succeeded() ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE);
            return report;
        } catch (RuntimeException e) {
            record(ssh.actor(), cluster, "placing " + what + " failed: " + e.getMessage(), AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /** A placement started through the API: what, since when, how far each Mac is, and its report or error once it ended. */
    public static final class Running {
        final String cluster;
        final String model;
        final java.time.Instant startedAt;
        final Map<String, long[]> progress = new ConcurrentHashMap<>();
        volatile PlacementReport report;
        volatile String error;

        Running(String cluster, String model, java.time.Instant startedAt) {
            this.cluster = cluster;
            this.model = model;
            this.startedAt = startedAt;
        }

        boolean ended() {
            return report != null || error != null;
        }
    }

    private final Map<String, Running> latest = new ConcurrentHashMap<>();

    /**
     * Starts placing the catalogue's model on the cluster on a thread of its own; refused at once (nothing started) for
     * an unknown cluster or model, or while a placement of this cluster started here is still running.
     */
    public Running placeInBackground(String cluster, String modelName, String actor) {
        try {
            runtimes.cluster(cluster, Optional.empty(), Optional.empty());
        } catch (RuntimeRefused unknown) {
            throw PlacementRefused.badInput(unknown.getMessage());
        }
        CatalogueModel model = catalogue.find(modelName).orElseThrow(() -> PlacementRefused.badInput("no model named '" + modelName
                + "' in the catalogue (macfleet model list shows them; macfleet model add NAME SOURCE adds one)"));
        Running running = new Running(cluster, model.name(), clock.instant());
        Running before = latest.compute(cluster, (name, current) -> current != null && !current.ended() ? current : running);
        if (before != running) {
            throw PlacementRefused.busy("a placement of " + before.model + " on " + cluster + " is running since " + before.startedAt
                    + "; GET .../model-placements/latest follows it");
        }
        NodeDeployer.Listener progress = new NodeDeployer.Listener() {
            @Override
            public void copying(String machine, String file, long done, long total) {
                running.progress.put(machine + " " + file, new long[] {done, total});
            }
        };
        Thread.ofVirtual().name("model-placement-" + cluster).start(() -> {
            try {
                running.report = place(cluster, model, SshSettings.defaults(actor), progress);
            } catch (RuntimeException e) {
                // Also in the audit log (model.place, failure).
                running.error = e.getMessage();
            }
        });
        return running;
    }

    /** The latest placement started through the API for this cluster (since this service started). */
    public Optional<Running> latest(String cluster) {
        return Optional.ofNullable(latest.get(cluster));
    }

    /**
     * node deploy's fan-out: a one-file catalogue model (the only kind the bundled node loads from one path) on a
     * cluster of two or more Macs is placed Mac to Mac; anything else is left to staging's own copy.
     */
    @Override
    public Optional<String> place(String cluster, java.nio.file.Path modelFile, SshSettings ssh, NodeDeployer.Listener listener) {
        Optional<CatalogueModel> model = catalogue.list().stream()
                .filter(entry -> entry.files().size() == 1 && catalogue.localFile(entry, entry.files().getFirst()).toAbsolutePath().normalize()
                        .equals(modelFile.toAbsolutePath().normalize()))
                .findFirst();
        if (model.isEmpty()) {
            return Optional.empty();
        }
        int machines;
        try {
            machines = runtimes.cluster(cluster, Optional.empty(), Optional.empty()).machines().size();
        } catch (RuntimeRefused unknown) {
            return Optional.empty();
        }
        if (machines < 2) {
            return Optional.empty();
        }
        PlacementReport report = place(cluster, model.get(), ssh, listener);
        String summary = summary(model.get().name(), report);
        if (!report.succeeded()) {
            throw new IllegalStateException(summary);
        }
        return Optional.of("placed over Thunderbolt: " + summary);
    }

    static String summary(String what, PlacementReport report) {
        long placed = report.machines().stream().filter(outcome -> outcome.kind() == PlacementReport.Kind.PLACED).count();
        long present = report.machines().stream().filter(outcome -> outcome.kind() == PlacementReport.Kind.ALREADY_PRESENT).count();
        List<String> failed = report.machines().stream().filter(outcome -> outcome.kind() == PlacementReport.Kind.FAILED)
                .map(outcome -> outcome.machine() + ": " + outcome.message()).toList();
        return String.format(Locale.ROOT, "%s on %s: placed on %d, already on %d, failed on %d; %d bytes from the control host for %d bytes of model, %.1f s%s",
                what, report.cluster(), placed, present, failed.size(), report.bytesFromControlHost(), report.totalBytes(), report.wallMillis() / 1000.0,
                failed.isEmpty() ? "" : " (" + String.join("; ", failed) + ")");
    }

    private void record(String actor, String cluster, String detail, AuditEvent.Outcome outcome) {
        audit.record(new AuditEvent(clock.instant(), actor, cluster, "model.place", detail, outcome));
    }
}
