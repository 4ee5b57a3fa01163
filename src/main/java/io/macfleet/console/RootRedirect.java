package io.macfleet.console;

import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.net.URI;

/** The service's front door leads to the console (which sends whoever is not signed in on to the login page). */
@Path("/")
public class RootRedirect {

    @GET
    @PermitAll
    public Response root() {
        return Response.seeOther(URI.create("/console")).build();
    }
}
