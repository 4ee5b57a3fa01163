package io.macfleet.api;

import io.macfleet.problem.Problem;
import io.macfleet.problem.ProblemException;
import io.macfleet.database.DatabaseException;
import io.macfleet.inventory.PositionedYaml;
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
        for (Throwable cause = exception.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof com.fasterxml.jackson.core.JsonProcessingException json) {
                // A body that is not JSON at all arrives wrapped: answer it like any other bad JSON.
                return json(json, uri);
            }
        }
        int status = exception.getResponse().getStatus();
        String title = exception.getResponse().getStatusInfo().getReasonPhrase();
        if (status == 413) {
            // Only a form over quarkus.http.limits.max-form-attribute-size gets here: say which limit, in words.
            String detail = "the form is larger than the service accepts (a YAML document may have at most "
                    + PositionedYaml.MAXIMUM_DOCUMENT_BYTES + " bytes)";
            return uri.getPath().startsWith("/console") ? ErrorPage.response(status, title, detail, "/console/inventory", "Back to the inventory")
                    : response(status, title, detail, uri);
        }
        if (uri.getPath().startsWith("/console")) {
            return ErrorPage.response(status, title, exception.getMessage(), "/console", "Back to the console");
        }
        return response(status, title, exception.getMessage(), uri);
    }

    /**
     * A JSON body that does not parse or does not fit the expected types: where and what, in words. Never the
     * exception's own message, which names Java classes.
     */
    @ServerExceptionMapper
    public Response json(com.fasterxml.jackson.core.JsonProcessingException exception, @Context UriInfo uri) {
        String where = "";
        if (exception instanceof com.fasterxml.jackson.databind.JsonMappingException mapping && !mapping.getPath().isEmpty()) {
            where = " at '" + String.join(".", mapping.getPath().stream()
                    .map(reference -> reference.getFieldName() != null ? reference.getFieldName() : "[" + reference.getIndex() + "]").toList()) + "'";
        }
        String what;
        if (exception instanceof com.fasterxml.jackson.databind.exc.MismatchedInputException mismatched && mismatched.getTargetType() != null) {
            what = "a value of the wrong type; expected " + describe(mismatched.getTargetType());
        } else if (exception instanceof com.fasterxml.jackson.core.exc.InputCoercionException) {
            what = "a number out of range";
        } else {
            what = "malformed JSON";
        }
        return response(400, "Bad Request", "invalid JSON body" + where + ": " + what, uri);
    }

    /** Quarkus maps this subtype itself (with Java names in the body); macfleet's answer wins. */
    @ServerExceptionMapper
    public Response mismatchedJson(com.fasterxml.jackson.databind.exc.MismatchedInputException exception, @Context UriInfo uri) {
        return json(exception, uri);
    }

    @ServerExceptionMapper
    public Response unparsableJson(com.fasterxml.jackson.core.JsonParseException exception, @Context UriInfo uri) {
        return json(exception, uri);
    }

    private static String describe(Class<?> type) {
        if (type == String.class) {
            return "a string";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "a whole number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        return "an object or value of another shape";
    }

    @ServerExceptionMapper
    public Response database(DatabaseException exception, @Context UriInfo uri) {
        LOG.error("database failure answering " + uri.getPath(), exception);
        return response(503, "Service Unavailable", "the database is not available", uri);
    }

    /**
     * Anything no other mapper answers: a fault of macfleet itself. The body says so with an id to find the
     * stack trace in the service's log; never the exception's class or message, which name Java classes and paths
     * on the server (Quarkus' own answer would).
     */
    @ServerExceptionMapper
    public Response unexpected(RuntimeException exception, @Context UriInfo uri) {
        String errorId = java.util.UUID.randomUUID().toString();
        LOG.error("unexpected failure answering " + uri.getPath() + " (error id " + errorId + ")", exception);
        if (uri.getPath().startsWith("/console")) {
            return ErrorPage.response(500, "Internal Server Error", unexpectedDetail(errorId), "/console", "Back to the console");
        }
        return response(500, "Internal Server Error", unexpectedDetail(errorId), uri);
    }

    static String unexpectedDetail(String errorId) {
        return "macfleet failed unexpectedly; the service log has the details under error id " + errorId;
    }

    private static Response response(int status, String title, String detail, UriInfo uri) {
        return Response.status(status).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", title, status, detail, uri.getPath())).build();
    }
}
