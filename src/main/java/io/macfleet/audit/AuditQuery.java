package io.macfleet.audit;

import java.time.Instant;

/**
 * A filter over the audit log; null fields do not filter.
 *
 * @param since only entries at or after this instant
 * @param until only entries before this instant
 * @param text only entries whose actor, machine, action or detail contains this text, ignoring case
 * @param offset how many of the newest matching entries to skip (paging)
 * @param limit the most recent entries to return (at least 1)
 */
public record AuditQuery(String machine, String action, String actor, Instant since, Instant until, String text,
                         int offset, int limit) {

    public static final int DEFAULT_LIMIT = 100;
    public static final int MAXIMUM_LIMIT = 10_000;

    public AuditQuery {
        if (limit < 1 || limit > MAXIMUM_LIMIT) {
            throw new IllegalArgumentException("limit " + limit + " is out of range; expected 1 to " + MAXIMUM_LIMIT);
        }
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + " is negative; expected 0 or more");
        }
        if (since != null && until != null && until.isBefore(since)) {
            throw new IllegalArgumentException("the time range ends (" + until + ") before it starts (" + since + ")");
        }
        text = text == null || text.isBlank() ? null : text.strip();
    }

    /** The newest entries matching machine, action, actor and time, as the CLI and the REST API filter. */
    public AuditQuery(String machine, String action, String actor, Instant since, int limit) {
        this(machine, action, actor, since, null, null, 0, limit);
    }

    public static AuditQuery all() {
        return new AuditQuery(null, null, null, null, DEFAULT_LIMIT);
    }
}
