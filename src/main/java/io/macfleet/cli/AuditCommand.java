package io.macfleet.cli;

import io.macfleet.command.JsonOption;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.audit.AuditEntry;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.database.DatabaseException;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** `macfleet audit`: the audit log, newest first, filterable. */
@Command(name = "audit", mixinStandardHelpOptions = true,
        description = "List the audit log (who did what to which machine, and how it ended), newest first.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:listed", "1:the database failed", "2:a bad option value"})
public class AuditCommand implements Callable<Integer> {

    @Option(names = "--machine", paramLabel = "NAME", description = "only entries about this machine")
    String machine;

    @Option(names = "--action", paramLabel = "ACTION", description = "only this action (inventory.apply), or every action with a prefix ('inventory.*')")
    String action;

    @Option(names = "--exclude-action", paramLabel = "ACTION", split = ",",
            description = "leave out this action or prefix (ssh.exec, 'demo.*'); repeatable or comma-separated")
    List<String> excludedActions = new java.util.ArrayList<>();

    @Option(names = "--actor", paramLabel = "NAME", description = "only entries by this actor")
    String actor;

    @Option(names = "--since", paramLabel = "TIME", description = "only entries at or after this ISO time (2026-11-21T10:00:00Z) or date (2026-11-21, UTC)")
    String since;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100", description = "at most N entries (1 to 10000, default ${DEFAULT-VALUE})")
    int limit;

    @Mixin
    JsonOption json;

    @Spec
    CommandSpec spec;

    @Inject
    JdbcAuditLog auditLog;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        AuditQuery query;
        try {
            query = new AuditQuery(machine, action, actor, since == null ? null : parseTime(since), limit, excludedActions);
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        List<AuditEntry> entries;
        try {
            entries = auditLog.find(query);
        } catch (DatabaseException e) {
            throw CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet: " + e.getMessage());
        }
        if (json.on()) {
            out.println(InventoryCommand.Json.MAPPER.writeValueAsString(entries.stream().map(entry -> new java.util.LinkedHashMap<String, Object>() {{
                put("id", entry.id());
                put("at", entry.event().at().toString());
                put("actor", entry.event().actor());
                put("machine", entry.event().machine());
                put("action", entry.event().action());
                put("outcome", entry.event().outcome().name());
                put("detail", entry.event().detail());
            }}).toList()));
        } else {
            out.printf("%-6s %-20s %-16s %-12s %-26s %-8s %s%n", "ID", "TIME (UTC)", "ACTOR", "MACHINE", "ACTION", "OUTCOME", "DETAIL");
            for (AuditEntry entry : entries) {
                var event = entry.event();
                out.printf("%-6d %-20s %-16s %-12s %-26s %-8s %s%n", entry.id(),
                        event.at().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString(), event.actor(),
                        event.machine() == null ? "-" : event.machine(), event.action(), event.outcome().name(), event.detail());
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** An ISO instant, an ISO date-time with offset, or a date (midnight UTC). */
    static Instant parseTime(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException notDateTime) {
            try {
                return LocalDate.parse(text).atStartOfDay().toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notDate) {
                throw new IllegalArgumentException("--since '" + text + "' is not a time; expected ISO 8601 such as 2026-11-21T10:00:00Z or 2026-11-21");
            }
        }
    }
}
