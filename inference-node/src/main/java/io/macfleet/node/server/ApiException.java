package io.macfleet.node.server;

/** A request the API refuses; rendered as an OpenAI-style error body with the given HTTP status. */
final class ApiException extends RuntimeException {
    final int status;
    final String type;
    final String param;
    final String code;

    ApiException(int status, String type, String message, String param, String code) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    static ApiException badRequest(String message, String param) {
        return new ApiException(400, "invalid_request_error", message, param, null);
    }
}
