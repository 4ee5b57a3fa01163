package io.macfleet.console;

import static io.macfleet.console.ConsoleSupport.blank;
import static io.macfleet.console.ConsoleSupport.emptyToNull;
import static io.macfleet.console.ConsoleSupport.trim;

import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The audit log: searched by text, actor, machine and time range, newest first, a page at a time. */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class AuditLogResource {

    private final JdbcAuditLog auditLog;
    private final ConsoleFrame frame;

    @Inject
    public AuditLogResource(JdbcAuditLog auditLog, ConsoleFrame frame) {
        this.auditLog = auditLog;
        this.frame = frame;
    }

    @GET
    @Path("audit")
    public Response audit(@QueryParam("text") String text, @QueryParam("actor") String actor, @QueryParam("machine") String machine,
                          @QueryParam("from") String from, @QueryParam("to") String to, @QueryParam("exclude") String exclude,
                          @QueryParam("page") String pageNumber) {
        Pages.AuditForm form = new Pages.AuditForm(trim(text), trim(actor), trim(machine), trim(from), trim(to), trim(exclude));
        Pages.Layout layout = frame.layout("Audit log", "audit");
        int page;
        AuditQuery query;
        try {
            page = blank(pageNumber) ? 1 : Integer.parseInt(pageNumber.strip());
            if (page < 1) {
                throw new NumberFormatException();
            }
            query = new AuditQuery(emptyToNull(form.machine()), null, emptyToNull(form.actor()), AuditPage.time("from", form.from(), false),
                    AuditPage.time("to", form.to(), true), emptyToNull(form.text()), (page - 1) * AuditPage.PAGE_SIZE, AuditPage.PAGE_SIZE,
                    form.excludedActions());
        } catch (NumberFormatException e) {
            return ConsoleSupport.page(400, Templates.audit(new Pages.Audit(layout, form, "The page '" + pageNumber
                    + "' is not a page number (1, 2, ...).", List.of(), 0, 0, 0, null, null)));
        } catch (IllegalArgumentException e) {
            return ConsoleSupport.page(400, Templates.audit(new Pages.Audit(layout, form, e.getMessage(), List.of(), 0, 0, 0, null, null)));
        }
        List<Pages.AuditRow> entries = auditLog.find(query).stream().map(Pages.AuditRow::of).toList();
        long total = auditLog.count(query);
        long first = entries.isEmpty() ? 0 : query.offset() + 1L;
        long last = query.offset() + (long) entries.size();
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("text", form.text());
        parameters.put("actor", form.actor());
        parameters.put("machine", form.machine());
        parameters.put("from", form.from());
        parameters.put("to", form.to());
        parameters.put("exclude", form.exclude());
        String previous = page > 1 ? AuditPage.url(parameters, page - 1) : null;
        String next = last < total ? AuditPage.url(parameters, page + 1) : null;
        return ConsoleSupport.page(200, Templates.audit(new Pages.Audit(layout, form, null, entries, total, first, last, previous, next)));
    }
}
