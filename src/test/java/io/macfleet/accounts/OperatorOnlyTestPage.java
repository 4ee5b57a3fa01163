package io.macfleet.accounts;

import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** A console page and form that only operators may use, standing in for the console's own pages in these tests. */
@Path("/console/test/operator-only")
@Produces(MediaType.TEXT_HTML)
public class OperatorOnlyTestPage {

    @Inject
    CurrentUser user;

    @GET
    @RolesAllowed(Roles.OPERATOR)
    public String page() {
        return "<p>operator page for " + user.name() + "</p>";
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    public String act(@FormParam("what") String what) {
        return "<p>" + user.actor() + " did " + what + "</p>";
    }
}
