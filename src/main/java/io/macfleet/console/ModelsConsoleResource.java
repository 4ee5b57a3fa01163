package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.HuggingFaceHub;
import io.macfleet.models.ModelCatalogue;
import io.macfleet.models.ModelFile;
import io.macfleet.models.ModelRefused;
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
 * their SHA-256; operators add from a Hugging Face repository and remove. Where each model is placed on a cluster
 * comes with the placement (`model place`), not here yet.
 */
@Path("/console/models")
@Produces(MediaType.TEXT_HTML)
public class ModelsConsoleResource {

    /** The page's template (templates/console/models.html), checked against these records at build time. */
    @CheckedTemplate(basePath = "console")
    static final class ModelsTemplates {
        static native TemplateInstance models(Page page);
    }

    public record Page(Pages.Layout layout, List<ModelRow> models, boolean localSources) {
    }

    public record ModelRow(String name, String format, String architecture, String quantization, String size, String runtimes, String source,
                           List<FileRow> files) {
    }

    public record FileRow(String path, String size, String sha256) {
    }

    private final ModelCatalogue catalogue;
    private final ConsoleFrame frame;

    @Inject
    public ModelsConsoleResource(ModelCatalogue catalogue, ConsoleFrame frame) {
        this.catalogue = catalogue;
        this.frame = frame;
    }

    @GET
    public Response page() {
        List<ModelRow> rows = catalogue.list().stream().map(ModelsConsoleResource::row).toList();
        return ConsoleSupport.page(200, ModelsTemplates.models(new Page(frame.layout("Models", "models"), rows,
                catalogue.sourceDirectory().isPresent())));
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

    static ModelRow row(CatalogueModel model) {
        return new ModelRow(model.name(), model.format(), model.architecture(), model.quantization(), size(model.totalBytes()),
                String.join(", ", model.runtimes()), model.source(), model.files().stream().map(ModelsConsoleResource::file).toList());
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
