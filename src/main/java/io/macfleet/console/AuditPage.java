package io.macfleet.console;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The audit log page's parsing of its search form and its links. */
final class AuditPage {

    static final int PAGE_SIZE = 50;

    private AuditPage() {
    }

    static String url(Map<String, String> parameters, int page) {
        Map<String, String> withPage = new LinkedHashMap<>(parameters);
        withPage.put("page", page == 1 ? "" : String.valueOf(page));
        return "/console/audit" + ConsoleSupport.query(withPage);
    }

    /**
     * A time of the search form: an ISO time with zone, a date-time without one (as the browser's datetime-local
     * input sends it; read as UTC), or a date (its start, or for the end of a range the start of the next day).
     */
    static Instant time(String field, String text, boolean endOfRange) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException notZoned) {
            try {
                return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notLocal) {
                try {
                    LocalDate date = LocalDate.parse(text);
                    return (endOfRange ? date.plusDays(1) : date).atStartOfDay().toInstant(ZoneOffset.UTC);
                } catch (DateTimeParseException notDate) {
                    throw new IllegalArgumentException("'" + field + "' is not a time: '" + text
                            + "'; expected e.g. 2026-11-22T10:00 (UTC), 2026-11-22T10:00:00Z or 2026-11-22");
                }
            }
        }
    }
}
