package io.macfleet.api;

import io.macfleet.problem.ProblemException;
import io.macfleet.accounts.Roles;
import jakarta.annotation.security.RolesAllowed;

import io.macfleet.audit.AuditEntry;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The audit log, newest first, read-only. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1/audit")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "audit", description = "The append-only audit log")
public class AuditResource {

    /** One entry as the API shows it. */
    public record Entry(long id, Instant at, String actor, String machine, String action, String outcome, String detail) {
        static Entry of(AuditEntry entry) {
            var event = entry.event();
            return new Entry(entry.id(), event.at(), event.actor(), event.machine(), event.action(), event.outcome().name(), event.detail());
        }
    }

    @Inject
    JdbcAuditLog auditLog;

    @GET
    @Operation(summary = "Audit entries, newest first, filtered")
    public List<Entry> find(
            @Parameter(description = "only entries about this machine") @QueryParam("machine") String machine,
            @Parameter(description = "only this action (inventory.apply), or every action with a prefix (inventory.*)") @QueryParam("action") String action,
            @Parameter(description = "leave out this action or prefix (ssh.exec, demo.*); repeatable") @QueryParam("excludeAction") List<String> excludedActions,
            @Parameter(description = "only entries by this actor") @QueryParam("actor") String actor,
            @Parameter(description = "only entries at or after this ISO 8601 time or date") @QueryParam("since") String since,
            @Parameter(description = "at most this many entries, 1 to 10000 (default 100)") @QueryParam("limit") String limit) {
        AuditQuery query;
        try {
            query = new AuditQuery(machine, action, actor, since == null ? null : parseTime(since), parseLimit(limit), excludedActions);
        } catch (IllegalArgumentException e) {
            throw ProblemException.badRequest(e.getMessage());
        }
        return auditLog.find(query).stream().map(Entry::of).toList();
    }

    private static int parseLimit(String limit) {
        if (limit == null) {
            return AuditQuery.DEFAULT_LIMIT;
        }
        try {
            return Integer.parseInt(limit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("limit '" + limit + "' is not a number; expected 1 to " + AuditQuery.MAXIMUM_LIMIT);
        }
    }

    private static Instant parseTime(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException notDateTime) {
            try {
                return LocalDate.parse(text).atStartOfDay().toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notDate) {
                throw new IllegalArgumentException("since '" + text + "' is not a time; expected ISO 8601 such as 2026-11-21T10:00:00Z or 2026-11-21");
            }
        }
    }
}
