package io.macfleet.console;

import io.macfleet.accounts.Account;
import io.macfleet.accounts.AccountException;
import io.macfleet.accounts.AccountService;
import io.macfleet.accounts.ApiToken;
import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Role;
import io.macfleet.accounts.Roles;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryError;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Plan;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The admin's pages of the console: accounts (add, change role, disable, remove; revoke API tokens) and the inventory
 * (what is applied; plan and apply a YAML document). Each change goes through the same service as the CLI, with the
 * same checks, and is audited with the admin's name; the accounts area's CSRF filter guards every POST.
 */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class AdminResource {

    @Inject
    AccountService accounts;

    @Inject
    CurrentUser user;

    @Inject
    DesiredStateStore desiredState;

    @Inject
    JdbcAuditLog auditLog;

    // ---- accounts

    @GET
    @Path("accounts")
    @RolesAllowed(Roles.ADMIN)
    public Response accounts(@QueryParam("done") String done) {
        return accountsPage(200, done, null, "", Role.VIEWER.id());
    }

    @POST
    @Path("accounts")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response addAccount(@FormParam("name") String name, @FormParam("role") String role, @FormParam("password") String password,
                               @FormParam("repeat") String repeat) {
        String shownName = name == null ? "" : name.strip();
        String shownRole = role == null ? Role.VIEWER.id() : role;
        if (password == null || !password.equals(repeat)) {
            return accountsPage(400, null, "The two passwords differ; type the same password twice.", shownName, shownRole);
        }
        return change(() -> accounts.addUser(shownName, parseRole(role), password, user.actor()),
                "Added " + shownName + " as " + shownRole + ".", shownName, shownRole);
    }

    @POST
    @Path("accounts/{name}/role")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response setRole(@PathParam("name") String name, @FormParam("role") String role) {
        return change(() -> accounts.setRole(name, parseRole(role), user.actor()), name + " is now " + role + ".", "", Role.VIEWER.id());
    }

    @POST
    @Path("accounts/{name}/disabled")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response setDisabled(@PathParam("name") String name, @FormParam("disabled") String disabled) {
        boolean disable = "true".equals(disabled);
        return change(() -> accounts.setDisabled(name, disable, user.actor()),
                disable ? name + " is disabled: signed out everywhere, API tokens refused." : name + " is enabled again.", "", Role.VIEWER.id());
    }

    @POST
    @Path("accounts/{name}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response remove(@PathParam("name") String name) {
        return change(() -> accounts.removeUser(name, user.actor()), "Removed " + name + " with its sessions and API tokens.", "", Role.VIEWER.id());
    }

    @POST
    @Path("tokens/{id}/revoke")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response revoke(@PathParam("id") long id) {
        return change(() -> accounts.revokeToken(id, user.actor()), "Revoked API token " + id + ".", "", Role.VIEWER.id());
    }

    private static Role parseRole(String role) {
        return Role.parse(role);
    }

    /** A change, then back to the page (303, so a reload does not repeat it); a refusal shows the page with the reason. */
    private Response change(Runnable change, String done, String shownName, String shownRole) {
        try {
            change.run();
        } catch (AccountException e) {
            return accountsPage(e.invalidInput() ? 400 : 409, null, Pages.sentence(e.getMessage()) + ".", shownName, shownRole);
        } catch (IllegalArgumentException unknownRole) {
            return accountsPage(400, null, Pages.sentence(unknownRole.getMessage()) + ".", shownName, shownRole);
        }
        return Response.seeOther(URI.create("/console/accounts?done=" + URLEncoder.encode(done, StandardCharsets.UTF_8))).build();
    }

    private Response accountsPage(int status, String message, String error, String newName, String newRole) {
        Instant now = Instant.now();
        List<ApiToken> tokens = accounts.tokens(null);
        List<Pages.AccountRow> rows = accounts.users().stream().map((Account account) -> new Pages.AccountRow(account.name(), account.role().id(),
                account.disabled(), Ages.utc(account.created()), account.name().equals(user.name()),
                tokens.stream().filter(token -> token.user().equals(account.name())).count())).toList();
        List<Pages.TokenRow> tokenRows = tokens.stream().map(token -> new Pages.TokenRow(token.id(), token.user(), token.name(),
                Ages.utc(token.created()), token.lastUsed() == null ? "never" : Ages.utc(token.lastUsed()),
                token.expires() == null ? "never" : Ages.utc(token.expires()), token.expired(now))).toList();
        List<String> roles = Arrays.stream(Role.values()).map(Role::id).toList();
        return Pages.response(status, Templates.accounts(new Pages.Accounts(new Pages.Layout("Accounts", "accounts", Viewer.of(user)), rows,
                tokenRows, roles, message, error, newName, newRole)));
    }

    // ---- inventory

    @GET
    @Path("inventory")
    public Response inventory() {
        return inventoryPage(200, "", List.of(), null, false, null);
    }

    /** "Plan" shows what applying the document would change; "Apply" applies it in one transaction. Invalid: nothing changes. */
    @POST
    @Path("inventory")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.ADMIN)
    public Response planOrApply(@FormParam("yaml") String yaml, @FormParam("action") String action) {
        String document = yaml == null ? "" : yaml;
        if (document.isBlank()) {
            return inventoryPage(400, document, List.of("Paste an inventory YAML document (or choose a file) first."), null, false, null);
        }
        if (!"plan".equals(action) && !"apply".equals(action)) {
            return inventoryPage(400, document, List.of("Unknown action '" + action + "': expected plan or apply."), null, false, null);
        }
        LoadResult result = InventoryLoader.loadDocument(document);
        if (!result.valid()) {
            return inventoryPage(400, document, result.errors().stream().map(InventoryError::toString).toList(), null, false, null);
        }
        boolean apply = "apply".equals(action);
        Plan plan = apply ? desiredState.apply(result.inventory(), user.actor(), "an inventory pasted in the console by " + user.actor())
                : desiredState.plan(result.inventory());
        return inventoryPage(200, document, List.of(), plan, apply, apply ? plan.appliedSummary() : plan.summary());
    }

    private Response inventoryPage(int status, String yaml, List<String> errors, Plan plan, boolean applied, String summary) {
        List<Pages.AuditRow> applies = auditLog.find(new AuditQuery(null, "inventory.apply", null, null, 5)).stream().map(Pages.AuditRow::of).toList();
        List<Pages.PlanChange> changes = plan == null ? null : plan.changes().stream().map(change -> new Pages.PlanChange(
                change.kind().name().toLowerCase(java.util.Locale.ROOT), change.action().name().toLowerCase(java.util.Locale.ROOT), change.name(),
                change.fields().stream().map(field -> field.field() + ": " + Optional.ofNullable(field.before()).orElse("(none)") + " → "
                        + Optional.ofNullable(field.after()).orElse("(none)")).toList())).toList();
        return Pages.response(status, Templates.inventory(new Pages.Inventory(new Pages.Layout("Inventory", "inventory", Viewer.of(user)),
                desiredState.clusters().size(), desiredState.machines(null).size(), applies, yaml, errors, changes, applied, summary)));
    }

}
