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
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
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
    private final PlacementStore store;
    private volatile PlacementEngine.Settings settings = PlacementEngine.Settings.defaults();

    @Inject
    public ModelPlacement(RuntimeService runtimes, ModelCatalogue catalogue, JdbcHostKeyStore hostKeys, JdbcAuditLog audit, DataSource dataSource) {
        this(runtimes, catalogue, hostKeys, audit, Clock.systemUTC(), new PlacementStore(dataSource));
    }

    /** Without a database: nothing recorded (tests that build it by hand). */
    public ModelPlacement(RuntimeService runtimes, ModelCatalogue catalogue, HostKeyStore hostKeys, AuditLog audit, Clock clock) {
        this(runtimes, catalogue, hostKeys, audit, clock, PlacementStore.none());
    }

    public ModelPlacement(RuntimeService runtimes, ModelCatalogue catalogue, HostKeyStore hostKeys, AuditLog audit, Clock clock,
                          PlacementStore store) {
        this.store = store;
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

    /** Recorded in the database ({@link PlacementStore}) as it goes, and where each Mac holds it verified once done. */
    public PlacementReport place(String cluster, CatalogueModel model, SshSettings ssh, NodeDeployer.Listener listener) {
        return begin(cluster, model, ssh.actor()).run(ssh, listener);
    }

    /** Any verified files (the model named {@code what} in the audit entry). */
    public PlacementReport place(String cluster, String what, List<PlacedFile> files, SshSettings ssh, NodeDeployer.Listener listener) {
        return place(cluster, what, files, Optional.empty(), ssh, listener);
    }

    /** As above, fed by the Mac {@code heldOn} (which holds them verified) instead of this host when given. */
    public PlacementReport place(String cluster, String what, List<PlacedFile> files, Optional<String> heldOn, SshSettings ssh,
                                 NodeDeployer.Listener listener) {
        List<RuntimeCluster.Machine> machines;
        try {
            machines = runtimes.cluster(cluster, Optional.empty(), Optional.empty()).machines();
        } catch (RuntimeRefused unknown) {
            throw PlacementRefused.badInput(unknown.getMessage());
        }
        try (SshRun run = new SshTransport(ssh, hostKeys, audit, clock).openRun()) {
            PlacementReport report = new PlacementEngine(settings).place(run, cluster, machines, files, heldOn, listener);
            record(ssh.actor(), cluster, summary(what, report), report.succeeded() ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE);
            return report;
        } catch (RuntimeException e) {
            record(ssh.actor(), cluster, "placing " + what + " failed: " + e.getMessage(), AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /**
     * A placement being recorded: each Mac's bytes (summed over the files) are flushed to the {@link PlacementStore}
     * about every second by a thread of its own, which also refreshes the heartbeat that keeps it from reading as
     * interrupted; the outcome (or error) when it ends.
     */
    private final class Tracked {
        final String id;
        final String cluster;
        final CatalogueModel model;
        final List<PlacedFile> files;
        final Optional<String> heldOn;
        final Map<String, Long> bytesByMachineAndFile = new ConcurrentHashMap<>();

        Tracked(String id, String cluster, CatalogueModel model, List<PlacedFile> files, Optional<String> heldOn) {
            this.heldOn = heldOn;
            this.id = id;
            this.cluster = cluster;
            this.model = model;
            this.files = files;
        }

        PlacementReport run(SshSettings ssh, NodeDeployer.Listener listener) {
            NodeDeployer.Listener recording = new NodeDeployer.Listener() {
                @Override
                public void copying(String machine, String file, long done, long total) {
                    bytesByMachineAndFile.put(machine + "\u0000" + file, done);
                    listener.copying(machine, file, done, total);
                }

                @Override
                public void step(String machine, String what) {
                    listener.step(machine, what);
                }
            };
            Thread flusher = Thread.ofVirtual().name("model-placement-progress-" + cluster).start(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Thread.sleep(FLUSH_EVERY);
                    } catch (InterruptedException e) {
                        return;
                    }
                    flush();
                }
            });
            try {
                PlacementReport report = place(cluster, model.name(), files, heldOn, ssh, recording);
                stop(flusher);
                store.finish(id, model.name(), report, files, clock.instant());
                return report;
            } catch (RuntimeException e) {
                stop(flusher);
                store.fail(id, e.getMessage(), clock.instant());
                throw e;
            }
        }

        private void flush() {
            Map<String, Long> byMachine = new java.util.TreeMap<>();
            bytesByMachineAndFile.forEach((key, bytes) -> byMachine.merge(key.substring(0, key.indexOf('\u0000')), bytes, Long::sum));
            try {
                store.progress(id, byMachine, clock.instant());
            } catch (RuntimeException e) {
                // A database hiccup must not stop the placement; the next flush tries again.
            }
        }

        private void stop(Thread flusher) {
            flusher.interrupt();
            try {
                flusher.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final Duration FLUSH_EVERY = Duration.ofSeconds(1);

    private Tracked begin(String cluster, CatalogueModel model, String actor) {
        // A model added with --via lies on that Mac only: the chain starts there and this host sends none of it.
        Optional<String> heldOn = catalogue.heldOn(model.name());
        List<String> machines;
        try {
            machines = runtimes.cluster(cluster, Optional.empty(), Optional.empty()).machines().stream().map(RuntimeCluster.Machine::name).toList();
        } catch (RuntimeRefused unknown) {
            throw PlacementRefused.badInput(unknown.getMessage());
        }
        if (heldOn.isPresent() && !machines.contains(heldOn.get())) {
            throw PlacementRefused.badInput("model " + model.name() + " is held on " + heldOn.get() + " (model add --via), which is not a Mac of "
                    + cluster + ": a placement starts at the Mac that holds it (nothing was sent); place it on " + heldOn.get()
                    + "'s cluster, or add it again without --via to place it from this host");
        }
        List<PlacedFile> files = model.files().stream().map(file -> PlacedFile.of(model, file, catalogue.localFile(model, file))).toList();
        String id = UUID.randomUUID().toString();
        store.start(id, cluster, model.name(), actor, clock.instant(), model.totalBytes(), machines);
        return new Tracked(id, cluster, model, files, heldOn);
    }

    /**
     * Starts placing the catalogue's model on the cluster on a thread of its own and answers its record (state
     * running); refused at once (nothing started) for an unknown cluster or model, or while a placement of this
     * cluster is running (started here, by another service or by {@code model place}).
     */
    public synchronized PlacementStore.PlacementRecord placeInBackground(String cluster, String modelName, String actor) {
        try {
            runtimes.cluster(cluster, Optional.empty(), Optional.empty());
        } catch (RuntimeRefused unknown) {
            throw PlacementRefused.badInput(unknown.getMessage());
        }
        CatalogueModel model = catalogue.find(modelName).orElseThrow(() -> PlacementRefused.badInput("no model named '" + modelName
                + "' in the catalogue (macfleet model list shows them; macfleet model add NAME SOURCE adds one)"));
        Optional<PlacementStore.PlacementRecord> before = latest(cluster).filter(record -> record.state() == PlacementState.RUNNING);
        if (before.isPresent()) {
            throw PlacementRefused.busy("a placement of " + before.get().model() + " on " + cluster + " is running since "
                    + before.get().startedAt() + "; GET .../model-placements/" + before.get().id() + " follows it");
        }
        Tracked tracked = begin(cluster, model, actor);
        Thread.ofVirtual().name("model-placement-" + cluster).start(() -> {
            try {
                tracked.run(SshSettings.defaults(actor), NodeDeployer.Listener.NONE);
            } catch (RuntimeException e) {
                // Recorded (failed, with the message) and in the audit log (model.place, failure).
            }
        });
        return store.find(tracked.id, clock.instant()).orElseThrow();
    }

    /** The cluster's most recent recorded placement (API, CLI or deploy; survives a restart). */
    public Optional<PlacementStore.PlacementRecord> latest(String cluster) {
        return store.latest(cluster, clock.instant());
    }

    /** One recorded placement by id. */
    public Optional<PlacementStore.PlacementRecord> find(String id) {
        return store.find(id, clock.instant());
    }

    /** The most recent placements, newest first. */
    public List<PlacementStore.PlacementRecord> recent(int limit) {
        return store.recent(limit, clock.instant());
    }

    /** Where the model lies verified (per cluster, Mac and file). */
    public List<PlacementStore.PlacedCopy> placed(String model) {
        return store.placed(model);
    }

    /**
     * node deploy's fan-out: a one-file catalogue model (the only kind the bundled node loads from one path) on a
     * cluster of two or more Macs is placed Mac to Mac; anything else is left to staging's own copy.
     */
    @Override
    public Optional<io.macfleet.deployment.ModelFanOut.Placed> fanOut(String cluster, String catalogueName, SshSettings ssh, NodeDeployer.Listener listener) {
        Optional<CatalogueModel> model = catalogue.find(catalogueName).filter(entry -> entry.files().size() == 1);
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
        // Every Mac holds it verified now (placed, or found with its SHA-256): node deploy's staging does not hash it again.
        return Optional.of(new io.macfleet.deployment.ModelFanOut.Placed("placed over Thunderbolt: " + summary,
                report.machines().stream().filter(outcome -> outcome.kind() != PlacementReport.Kind.FAILED)
                        .map(PlacementReport.MacOutcome::machine).collect(java.util.stream.Collectors.toSet())));
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
