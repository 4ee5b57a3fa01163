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
 * @param action one action, or every action with a prefix when it ends in {@code *} ({@code inventory.*})
 * @param excludedActions actions left out (noise such as {@code ssh.exec}), each exact or a prefix ending in {@code *}
 */
public record AuditQuery(String machine, String action, String actor, Instant since, Instant until, String text,
                         int offset, int limit, java.util.List<String> excludedActions) {

    /** Without excluded actions. */
    public AuditQuery(String machine, String action, String actor, Instant since, Instant until, String text, int offset, int limit) {
        this(machine, action, actor, since, until, text, offset, limit, java.util.List.of());
    }

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
        action = action == null || action.isBlank() ? null : checkedPattern("action", action.strip());
        excludedActions = excludedActions == null ? java.util.List.of()
                : excludedActions.stream().map(String::strip).filter(excluded -> !excluded.isEmpty())
                        .map(excluded -> checkedPattern("excluded action", excluded)).toList();
    }

    /** An action filter is a name, or a prefix followed by one {@code *} at the end: a * elsewhere is a mistake. */
    private static String checkedPattern(String what, String pattern) {
        int star = pattern.indexOf('*');
        if (star >= 0 && star != pattern.length() - 1) {
            throw new IllegalArgumentException(what + " '" + pattern + "': a * may only end the name, as in inventory.*");
        }
        return pattern;
    }

    /** The newest entries matching machine, action or action prefix, actor and time, leaving out excluded actions. */
    public AuditQuery(String machine, String action, String actor, Instant since, int limit, java.util.List<String> excludedActions) {
        this(machine, action, actor, since, null, null, 0, limit, excludedActions);
    }

    /** The newest entries matching machine, action, actor and time, as the CLI and the REST API filter. */
    public AuditQuery(String machine, String action, String actor, Instant since, int limit) {
        this(machine, action, actor, since, null, null, 0, limit);
    }

    public static AuditQuery all() {
        return new AuditQuery(null, null, null, null, DEFAULT_LIMIT);
    }
}
