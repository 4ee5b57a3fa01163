package io.macfleet.console;

import jakarta.annotation.security.PermitAll;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * The web console for ops staff: server-rendered pages under /console, with htmx refreshing the live parts. Every
 * page needs a signed-in user (viewer); starting a provisioning run and confirming an operator step need an
 * operator, and the accounts area's CSRF filter checks the session's token on every POST. What the console does
 * is audited with the user's name (by the provisioning service it calls).
 *
 * <p>Each page area has its own resource: {@link OverviewResource}, {@link MachineResource}, {@link ClusterResource},
 * {@link RunResource}, {@link AuditLogResource} (and the admin's {@link AdminResource}); their page models are pure
 * functions ({@link OverviewPage}, {@link MachinePage}, {@link ClusterPage}, {@link RunPage}, {@link AuditPage}). This
 * one serves the static assets and answers any other address under /console.
 */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class ConsoleResource {

    private final ConsoleFrame frame;

    @Inject
    public ConsoleResource(ConsoleFrame frame) {
        this.frame = frame;
    }

    @GET
    @Path("static/{file: console\\.css|console\\.js|htmx\\.min\\.js}")
    @Produces(MediaType.WILDCARD)
    @PermitAll
    public Response asset(@PathParam("file") String file) {
        return ConsoleAssets.response(file).orElseGet(() -> frame.error(404, "Not found", "There is no console asset named '" + file + "'.",
                "/console", "Back to the fleet overview"));
    }

    /** Any other address under /console: a page that says so, instead of a bare 404. */
    @GET
    @Path("{path: (?!static/).+}")
    public Response unknown(@PathParam("path") String path) {
        return frame.error(404, "Page not found", "The console has no page at /console/" + path + ".", "/console", "Back to the fleet overview");
    }
}
