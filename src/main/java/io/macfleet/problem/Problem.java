package io.macfleet.problem;

/**
 * An RFC 9457 problem detail, the body of every 4xx/5xx answer of the API.
 */
public record Problem(String type, String title, int status, String detail, String instance) {
    public static final String MEDIA_TYPE = "application/problem+json";
}
