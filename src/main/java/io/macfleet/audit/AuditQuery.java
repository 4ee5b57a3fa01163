package io.macfleet.audit;

import java.time.Instant;

/**
 * A filter over the audit log; null fields do not filter.
 *
 * @param limit the most recent entries to return (at least 1)
 */
public record AuditQuery(String machine, String action, String actor, Instant since, int limit) {

    public static final int DEFAULT_LIMIT = 100;
    public static final int MAXIMUM_LIMIT = 10_000;

    public AuditQuery {
        if (limit < 1 || limit > MAXIMUM_LIMIT) {
            throw new IllegalArgumentException("limit " + limit + " is out of range; expected 1 to " + MAXIMUM_LIMIT);
        }
    }

    public static AuditQuery all() {
        return new AuditQuery(null, null, null, null, DEFAULT_LIMIT);
    }
}
