package io.macfleet.models;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * The model catalogue over HTTP. Adding takes {@code hf:} sources, or a local path under
 * {@code macfleet.models.source-directory} (so an API client cannot make the server read any file it can).
 */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1/models")
@Produces(MediaType.APPLICATION_JSON)
public class ModelResource {

    /** Body of an add: the name, the source (hf:ORG/REPOSITORY@REVISION or a path under the source directory), an optional glob. */
    /** @param via a machine of the inventory that downloads an hf: source itself (null: this host does) */
    public record AddRequest(String name, String source, String include, String via) {
    }

    @Inject
    ModelCatalogue catalogue;

    @Inject
    ModelFits fits;

    @Inject
    MacDownloads macDownloads;

    @Inject
    CurrentUser user;

    @GET
    public List<CatalogueModel> list() {
        return catalogue.list();
    }

    @GET
    @Path("/{name}")
    public CatalogueModel show(@PathParam("name") String name) {
        return catalogue.find(name).orElseThrow(() -> notFound(name));
    }

    /** Whether the model fits a cluster's Macs, per Mac, with the numbers (200 either way; {@code fits} says). */
    @GET
    @Path("/{name}/fit")
    public MemoryFit.Result fit(@PathParam("name") String name, @QueryParam("cluster") String cluster, @QueryParam("context") Integer context,
                                @QueryParam("slots") Integer slots) {
        if (cluster == null || cluster.isBlank()) {
            throw ProblemException.badRequest("query parameter cluster is required");
        }
        return problem(() -> fits.fit(cluster, name, Optional.ofNullable(context), Optional.ofNullable(slots)));
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    @Consumes(MediaType.APPLICATION_JSON)
    @APIResponse(responseCode = "201", description = "Added", content = @Content(schema = @Schema(implementation = CatalogueModel.class)))
    public Response add(AddRequest request) {
        if (request == null || request.name() == null || request.source() == null) {
            throw ProblemException.badRequest("name and source are required");
        }
        String source = request.source();
        if (request.via() != null) {
            CatalogueModel model = problem(() -> macDownloads.add(request.name(), request.source(), Optional.ofNullable(request.include()),
                    Optional.empty(), request.via(), io.macfleet.ssh.SshSettings.defaults(user.actor()), HuggingFaceHub.Progress.NONE));
            return Response.created(URI.create("/api/v1/models/" + model.name())).entity(model).build();
        }
        if (!HuggingFaceHub.Reference.isReference(source)) {
            source = allowedLocalSource(source).toString();
        }
        String checked = source;
        CatalogueModel model = problem(() -> catalogue.add(request.name(), checked, Optional.ofNullable(request.include()), Optional.empty(),
                user.actor(), HuggingFaceHub.Progress.NONE));
        return Response.created(URI.create("/api/v1/models/" + model.name())).entity(model).build();
    }

    @DELETE
    @Path("/{name}")
    @RolesAllowed(Roles.OPERATOR)
    @APIResponse(responseCode = "204", description = "Removed")
    public Response remove(@PathParam("name") String name) {
        if (!catalogue.remove(name, user.actor())) {
            throw notFound(name);
        }
        return Response.noContent().build();
    }

    /** A local source must lie under the configured directory once links are followed. */
    private java.nio.file.Path allowedLocalSource(String source) {
        java.nio.file.Path directory = catalogue.sourceDirectory().orElseThrow(() -> ProblemException.badRequest(
                "local sources are not taken over the API unless macfleet.models.source-directory is set; give hf:ORG/REPOSITORY@REVISION"));
        try {
            java.nio.file.Path base = directory.toRealPath();
            java.nio.file.Path given = java.nio.file.Path.of(source);
            java.nio.file.Path real = (given.isAbsolute() ? given : base.resolve(given)).toRealPath();
            if (!real.startsWith(base)) {
                throw ProblemException.badRequest("source " + source + " is outside the models source directory " + directory);
            }
            return real;
        } catch (IOException e) {
            throw new ProblemException(404, "Not Found", "model source " + source + " does not exist under " + directory);
        }
    }

    private static ProblemException notFound(String name) {
        return new ProblemException(404, "Not Found", "no model named '" + name + "' in the catalogue");
    }

    private static <T> T problem(java.util.function.Supplier<T> action) {
        try {
            return action.get();
        } catch (ModelRefused refused) {
            throw switch (refused.reason()) {
                case INVALID -> ProblemException.badRequest(refused.getMessage());
                case NOT_FOUND -> new ProblemException(404, "Not Found", refused.getMessage());
                case CONFLICT -> new ProblemException(409, "Conflict", refused.getMessage());
                case DOES_NOT_FIT -> new ProblemException(422, "Unprocessable Content", refused.getMessage());
                case DOWNLOAD_FAILED -> new ProblemException(502, "Bad Gateway", refused.getMessage());
            };
        }
    }
}
