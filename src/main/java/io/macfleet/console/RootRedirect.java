package io.macfleet.console;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.net.URI;

/** The service's front door leads to the console. */
@Path("/")
public class RootRedirect {

    @GET
    public Response root() {
        return Response.seeOther(URI.create("/console")).build();
    }
}
