package io.macfleet.api;

import io.macfleet.database.DatabaseException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Turns failures into RFC 9457 problem JSON. */
public class ProblemMapper {

    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);

    @ServerExceptionMapper
    public Response problem(ProblemException exception, @Context UriInfo uri) {
        return response(exception.status(), exception.title(), exception.getMessage(), uri);
    }

    @ServerExceptionMapper
    public Response webApplication(WebApplicationException exception, @Context UriInfo uri) {
        int status = exception.getResponse().getStatus();
        return response(status, exception.getResponse().getStatusInfo().getReasonPhrase(), exception.getMessage(), uri);
    }

    @ServerExceptionMapper
    public Response database(DatabaseException exception, @Context UriInfo uri) {
        LOG.error("database failure answering " + uri.getPath(), exception);
        return response(503, "Service Unavailable", "the database is not available", uri);
    }

    private static Response response(int status, String title, String detail, UriInfo uri) {
        return Response.status(status).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", title, status, detail, uri.getPath())).build();
    }
}
