package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.HuggingFaceHub;
import io.macfleet.models.ModelCatalogue;
import io.macfleet.models.ModelFile;
import io.macfleet.models.ModelRefused;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.models.placement.ModelPlacement;
import io.macfleet.models.placement.ModelPlacementResource;
import io.macfleet.models.placement.PlacementRefused;
import io.macfleet.models.placement.PlacementState;
import io.macfleet.models.placement.PlacementStore;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The model catalogue in the console: each model's format, architecture, quantization, runtimes, source and files with
 * their SHA-256, where each lies verified (which Macs of which clusters, since when, by which placement); the recent
 * placements with each Mac's progress (a part htmx fetches every few seconds); operators add from a Hugging Face
 * repository, remove, and start a placement on a cluster (as {@code POST /api/v1/clusters/C/model-placements}).
 */
@Path("/console/models")
@Produces(MediaType.TEXT_HTML)
public class ModelsConsoleResource {

    /** The page's template (templates/console/models.html), checked against these records at build time. */
    @CheckedTemplate(basePath = "console")
    static final class ModelsTemplates {
        static native TemplateInstance models(Page page);

        static native TemplateInstance modelPlacements(Placements placements);
    }

    public record Page(Pages.Layout layout, List<ModelRow> models, boolean localSources, List<String> clusters) {
    }

    public record ModelRow(String name, String format, String architecture, String quantization, String size, String runtimes, String source,
                           List<FileRow> files, List<PlacedRow> placed, String placedSummary) {
    }

    /** One Mac holding one file of the model, verified. */
    public record PlacedRow(String cluster, String machine, String remotePath, String verifiedAt, String verifiedBy) {
    }

    /** The recent placements, the part htmx refreshes. */
    public record Placements(List<PlacementRow> placements) {
    }

    public record PlacementRow(String id, String model, String cluster, String state, String stateCss, String startedBy, String startedAt,
                               String finishedAt, String detail, List<MachineProgress> machines) {
    }

    /** One Mac of a placement: bytes, percent, outcome (empty while it runs). */
    public record MachineProgress(String machine, String bytes, int percent, String outcome, String outcomeCss, String message) {
    }

    static final int RECENT_PLACEMENTS = 5;

    public record FileRow(String path, String size, String sha256) {
    }

    private final ModelCatalogue catalogue;
    private final ModelPlacement placement;
    private final DesiredStateStore desiredState;
    private final ConsoleFrame frame;

    @Inject
    public ModelsConsoleResource(ModelCatalogue catalogue, ModelPlacement placement, DesiredStateStore desiredState, ConsoleFrame frame) {
        this.catalogue = catalogue;
        this.placement = placement;
        this.desiredState = desiredState;
        this.frame = frame;
    }

    @GET
    public Response page() {
        List<ModelRow> rows = catalogue.list().stream().map(model -> row(model, placement.placed(model.name()))).toList();
        List<String> clusters = desiredState.clusters().stream().map(Cluster::name).sorted().toList();
        return ConsoleSupport.page(200, ModelsTemplates.models(new Page(frame.layout("Models", "models"), rows,
                catalogue.sourceDirectory().isPresent(), clusters)));
    }

    /** The recent placements with each Mac's progress; the page fetches it at load and every 5 seconds. */
    @GET
    @Path("placements")
    public Response placements() {
        return ConsoleSupport.live(ModelsTemplates.modelPlacements(placements(placement.recent(RECENT_PLACEMENTS))));
    }

    /** Starts a placement of a catalogue model on a cluster in the background, refused as the REST endpoint refuses. */
    @POST
    @Path("placements")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response place(@FormParam("model") String model, @FormParam("cluster") String cluster) {
        if (ConsoleSupport.blank(model) || ConsoleSupport.blank(cluster)) {
            return frame.error(400, "Cannot place the model", "Choose a model and a cluster.", "/console/models", "Back to models");
        }
        try {
            placement.placeInBackground(cluster.strip(), model.strip(), frame.actor());
        } catch (PlacementRefused refused) {
            int status = refused.isBusy() ? 409 : refused.getMessage().startsWith("no cluster named") ? 404 : 400;
            return frame.error(status, "Cannot place the model", Pages.sentence(refused.getMessage()) + ".", "/console/models", "Back to models");
        }
        return Response.seeOther(URI.create("/console/models#placements")).build();
    }

    /** The part's model, a pure function of the stored placements. */
    static Placements placements(List<PlacementStore.PlacementRecord> records) {
        return new Placements(records.stream().map(record -> {
            ModelPlacementResource.PlacementStatusBody body = ModelPlacementResource.PlacementStatusBody.of(record);
            String css = switch (record.state()) {
                case RUNNING -> "warn";
                case DONE -> Boolean.TRUE.equals(body.succeeded()) ? "ok" : "bad";
                case FAILED, INTERRUPTED -> "bad";
            };
            String state = record.state() == PlacementState.DONE && !Boolean.TRUE.equals(body.succeeded()) ? "done, with failures" : record.state().label();
            String detail = size(record.totalBytes()) + (record.state() == PlacementState.DONE
                    ? ", " + size(record.bytesFromControlHost()) + " from the control host" : "")
                    + (record.state() == PlacementState.INTERRUPTED ? "; its process stopped (macfleet restarted?): macfleet model place "
                    + record.cluster() + " " + record.model() + " resumes it" : "")
                    + record.error().map(error -> "; " + error).orElse("");
            List<MachineProgress> machines = body.machines().stream().map(machine -> new MachineProgress(machine.machine(),
                    size(machine.bytesWritten()), machine.percent(), machine.outcome() == null ? "" : machine.outcome(),
                    machine.outcome() == null ? "" : machine.outcome().equals("failed") ? "bad" : "ok",
                    machine.message() == null ? "" : machine.message())).toList();
            return new PlacementRow(record.id(), record.model(), record.cluster(), state, css, record.startedBy(), Ages.utc(record.startedAt()),
                    record.finishedAt().map(Ages::utc).orElse(""), detail, machines);
        }).toList());
    }

    /** Adds from hf:ORG/REPOSITORY@REVISION (the download runs while the page waits). */
    @POST
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response add(@FormParam("name") String name, @FormParam("source") String source, @FormParam("include") String include) {
        if (source == null || !HuggingFaceHub.Reference.isReference(source.strip())) {
            return frame.error(400, "Cannot add the model", "The console adds from a Hugging Face repository: hf:ORG/REPOSITORY@REVISION"
                    + " (local files: macfleet model add, or the REST API with macfleet.models.source-directory).", "/console/models", "Back to models");
        }
        try {
            catalogue.add(name == null ? null : name.strip(), source.strip(), Optional.ofNullable(include).map(String::strip).filter(glob -> !glob.isEmpty()),
                    Optional.empty(), frame.actor(), HuggingFaceHub.Progress.NONE);
        } catch (ModelRefused refused) {
            int status = switch (refused.reason()) {
                case CONFLICT -> 409;
                case NOT_FOUND -> 404;
                case DOWNLOAD_FAILED -> 502;
                default -> 400;
            };
            return frame.error(status, "Cannot add the model", Pages.sentence(refused.getMessage()) + ".", "/console/models", "Back to models");
        }
        return Response.seeOther(URI.create("/console/models")).build();
    }

    @POST
    @Path("{name}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response remove(@PathParam("name") String name) {
        if (!catalogue.remove(name, frame.actor())) {
            return frame.error(404, "Model not found", "No model named " + name + " in the catalogue.", "/console/models", "Back to models");
        }
        return Response.seeOther(URI.create("/console/models")).build();
    }

    static ModelRow row(CatalogueModel model, List<PlacementStore.PlacedCopy> placed) {
        List<PlacedRow> rows = placed.stream().map(copy -> new PlacedRow(copy.cluster(), copy.machine(), copy.remotePath(),
                Ages.utc(copy.verifiedAt()), copy.verifiedBy())).toList();
        // A Mac counts as holding the model when it holds every file verified.
        java.util.Map<String, java.util.TreeSet<String>> machinesByCluster = new java.util.TreeMap<>();
        placed.stream().collect(java.util.stream.Collectors.groupingBy(copy -> copy.cluster() + "\u0000" + copy.machine(), java.util.stream.Collectors.counting()))
                .forEach((key, files) -> {
                    if (files == model.files().size()) {
                        String[] parts = key.split("\u0000", 2);
                        machinesByCluster.computeIfAbsent(parts[0], cluster -> new java.util.TreeSet<>()).add(parts[1]);
                    }
                });
        String summary = machinesByCluster.isEmpty() ? "not placed" : machinesByCluster.entrySet().stream()
                .map(entry -> entry.getKey() + ": " + String.join(", ", entry.getValue())).collect(java.util.stream.Collectors.joining("; "));
        return new ModelRow(model.name(), model.format(), model.architecture(), model.quantization(), size(model.totalBytes()),
                String.join(", ", model.runtimes()), model.source(), model.files().stream().map(ModelsConsoleResource::file).toList(), rows, summary);
    }

    private static FileRow file(ModelFile file) {
        return new FileRow(file.path(), size(file.size()), file.sha256());
    }

    static String size(long bytes) {
        if (bytes >= 1L << 30) {
            return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
        }
        if (bytes >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
        }
        return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
}
