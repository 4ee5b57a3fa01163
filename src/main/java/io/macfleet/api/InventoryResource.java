package io.macfleet.api;

import io.macfleet.problem.ProblemException;
import com.fasterxml.jackson.databind.JsonNode;
import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryDocuments;
import io.macfleet.inventory.InventoryError;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.PositionedYaml;
import io.macfleet.inventory.Plan;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The applied inventory (desired state): read by viewers; planned and applied by admins from a YAML document in the
 * request body (the CLI's `macfleet inventory plan|apply DIR` does the same from a directory).
 */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "inventory", description = "The applied inventory (desired state)")
public class InventoryResource {

    @Inject
    DesiredStateStore store;

    @Inject
    CurrentUser currentUser;

    @POST
    @Path("/inventory/plan")
    @Consumes({"application/yaml", "text/yaml", MediaType.TEXT_PLAIN})
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "What applying this inventory (one YAML document) would change; changes nothing")
    @APIResponse(responseCode = "400", description = "the inventory is invalid: every error as inventory.yaml:LINE:COLUMN (problem JSON)")
    @APIResponse(responseCode = "413", description = "the document is over a size, value-count or nesting limit, named in the answer (problem JSON)")
    public Plan plan(byte[] yaml) {
        return store.plan(load(yaml).inventory());
    }

    @POST
    @Path("/inventory/apply")
    @Consumes({"application/yaml", "text/yaml", MediaType.TEXT_PLAIN})
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Apply this inventory (one YAML document) in one transaction; answers what changed")
    @APIResponse(responseCode = "400", description = "the inventory is invalid: nothing is changed (problem JSON)")
    @APIResponse(responseCode = "413", description = "the document is over a size, value-count or nesting limit, named in the answer (problem JSON)")
    public Plan apply(byte[] yaml) {
        return store.apply(load(yaml).inventory(), currentUser.actor(), "an inventory posted to the API by " + currentUser.actor());
    }

    /** Secrets stay references (env:/file:), resolved on this server when used, exactly as from a directory. */
    static LoadResult load(byte[] body) {
        if (body != null && body.length > PositionedYaml.MAXIMUM_DOCUMENT_BYTES) {
            throw new ProblemException(413, "Content Too Large", "the document is " + body.length + " bytes, " + PositionedYaml.LIMIT_EXCEEDED
                    + " of " + PositionedYaml.MAXIMUM_DOCUMENT_BYTES + " bytes for one YAML document; expected a smaller document");
        }
        String yaml;
        try {
            // Bytes, decoded here: the framework would replace invalid UTF-8 silently.
            yaml = body == null ? "" : PositionedYaml.decodeUtf8(body);
        } catch (PositionedYaml.SyntaxException e) {
            throw ProblemException.badRequest(InventoryLoader.DOCUMENT_NAME + ":" + e.position().line() + ":" + e.position().column() + ": " + e.getMessage());
        }
        if (yaml.isBlank()) {
            throw ProblemException.badRequest("expected an inventory YAML document in the request body (Content-Type: application/yaml)");
        }
        LoadResult result = InventoryLoader.loadDocument(yaml);
        if (result.errors().stream().anyMatch(error -> PositionedYaml.isLimitMessage(error.message()))) {
            throw new ProblemException(413, "Content Too Large", String.join("\n", result.errors().stream()
                    .filter(error -> PositionedYaml.isLimitMessage(error.message())).map(InventoryError::toString).toList()));
        }
        if (!result.valid()) {
            throw ProblemException.badRequest(result.errors().size() + (result.errors().size() == 1 ? " error" : " errors") + ":\n"
                    + String.join("\n", result.errors().stream().map(InventoryError::toString).toList()));
        }
        return result;
    }

    @GET
    @Path("/clusters")
    @Operation(summary = "All clusters, each with the names of its machines")
    public List<JsonNode> clusters() {
        Inventory inventory = store.inventory();
        return inventory.clusters().stream().map(cluster -> view(inventory, cluster)).toList();
    }

    private static JsonNode view(Inventory inventory, Cluster cluster) {
        return InventoryDocuments.json(cluster, inventory.machinesOf(cluster.name()).stream().map(Machine::name).toList());
    }

    @GET
    @Path("/clusters/{name}")
    @Operation(summary = "One cluster")
    @APIResponse(responseCode = "200", description = "the cluster")
    @APIResponse(responseCode = "404", description = "no such cluster (problem JSON)")
    public JsonNode cluster(@PathParam("name") String name) {
        Inventory inventory = store.inventory();
        return inventory.cluster(name).map(cluster -> view(inventory, cluster)).orElseThrow(() -> ProblemException.notFound("cluster", name));
    }

    @GET
    @Path("/machines")
    @Operation(summary = "All machines in name order, or those of one cluster")
    public List<JsonNode> machines(@Parameter(description = "only the machines of this cluster") @QueryParam("cluster") String cluster) {
        if (cluster != null && store.cluster(cluster).isEmpty()) {
            throw ProblemException.badRequest("cluster '" + cluster + "' is not in the applied inventory");
        }
        return store.machines(cluster).stream().map(InventoryDocuments::json).toList();
    }

    @GET
    @Path("/machines/{name}")
    @Operation(summary = "One machine, with defaults and groups merged")
    @APIResponse(responseCode = "200", description = "the machine")
    @APIResponse(responseCode = "404", description = "no such machine (problem JSON)")
    public JsonNode machine(@PathParam("name") String name) {
        return store.machine(name).map(InventoryDocuments::json).orElseThrow(() -> ProblemException.notFound("machine", name));
    }
}
