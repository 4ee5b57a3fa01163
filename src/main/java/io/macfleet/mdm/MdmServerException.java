package io.macfleet.mdm;

import java.util.Objects;

/**
 * The MDM server did not do what was asked. The message names the server (kind and URL, never the credential), the
 * request (method and path) and what went wrong, so an operator can act on it without a stack trace.
 */
public class MdmServerException extends RuntimeException {

    /** What kind of failure, for callers that react differently (retry a timeout, stop on a refused credential). */
    public enum Problem {
        /** 401: the API key is wrong or missing. Retrying will not help. */
        UNAUTHORIZED,
        /** The server refused the request as malformed (4xx other than 401/404). */
        REJECTED,
        /** 404: the thing asked for does not exist. */
        NOT_FOUND,
        /** 5xx: the server failed. May pass. */
        SERVER_ERROR,
        /** The answer could not be read (not JSON, wrong shape). */
        MALFORMED_RESPONSE,
        /** A status code the API does not define for this request. */
        UNEXPECTED_STATUS,
        /** No complete answer within the deadline (a hung or very slow server). */
        TIMEOUT,
        /** The connection could not be made or broke. */
        UNREACHABLE
    }

    private final Problem problem;
    private final String server;
    private final String request;

    public MdmServerException(Problem problem, String server, String request, String detail, Throwable cause) {
        super(server + ": " + request + ": " + describe(problem) + (detail == null || detail.isBlank() ? "" : ": " + detail), cause);
        this.problem = Objects.requireNonNull(problem);
        this.server = server;
        this.request = request;
    }

    public MdmServerException(Problem problem, String server, String request, String detail) {
        this(problem, server, request, detail, null);
    }

    public Problem problem() {
        return problem;
    }

    /** The server as named in messages, e.g. {@code nanohub http://mdm.example:9004}. */
    public String server() {
        return server;
    }

    /** The request, e.g. {@code PUT /api/v1/ddm/declarations}. */
    public String request() {
        return request;
    }

    private static String describe(Problem problem) {
        return switch (problem) {
            case UNAUTHORIZED -> "the server refused the API key (HTTP 401); check the credential reference of the mdm section";
            case REJECTED -> "the server rejected the request";
            case NOT_FOUND -> "not found on the server (HTTP 404)";
            case SERVER_ERROR -> "the server failed";
            case MALFORMED_RESPONSE -> "the answer could not be read";
            case UNEXPECTED_STATUS -> "unexpected answer";
            case TIMEOUT -> "no answer within the deadline";
            case UNREACHABLE -> "cannot reach the server";
        };
    }
}
