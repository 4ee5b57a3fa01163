package io.macfleet.accounts;

import io.macfleet.problem.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Accounts and API tokens over REST, for admins (the same operations as `macfleet users` and `macfleet tokens`, with
 * the same checks: valid names, a password policy, never the last admin). Every change is audited with the admin's
 * name. Passwords travel in the request body only, never in a URL, and are never returned or logged.
 */
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "accounts", description = "Local accounts and their API tokens (admin)")
public class UsersResource {

    /** A user as listed. */
    public record User(String name, String role, boolean disabled, Instant created) {
        static User of(Account account) {
            return new User(account.name(), account.role().id(), account.disabled(), account.created());
        }
    }

    /** A token as listed: never the token itself. */
    public record Token(long id, String user, String name, Instant created, Instant lastUsed, Instant expires) {
        static Token of(ApiToken token) {
            return new Token(token.id(), token.user(), token.name(), token.created(), token.lastUsed(), token.expires());
        }
    }

    /** Body of POST /api/v1/users. */
    public record NewUser(String name, String role, String password) {
    }

    /** Body of PATCH /api/v1/users/{name}: any of the three. A new password ends the user's sessions. */
    public record UserChange(String role, Boolean disabled, String password) {
    }

    /** Body of POST /api/v1/users/{name}/tokens; expiresInDays optional. */
    public record NewToken(String name, Integer expiresInDays) {
    }

    /** A token just created: the only answer that ever contains it. */
    public record IssuedToken(long id, String user, String name, String token, Instant expires) {
    }

    /** Ten years: longer is a mistake (2147483647 days once stored a date in the year 5881637). */
    static final int MAXIMUM_TOKEN_DAYS = 3650;

    @Inject
    AccountService accounts;

    @Inject
    CurrentUser currentUser;

    @GET
    @Path("/users")
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Every account with its role")
    public List<User> users() {
        return accounts.users().stream().map(User::of).toList();
    }

    @POST
    @Path("/users")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Add an account")
    @APIResponse(responseCode = "201", description = "created")
    @APIResponse(responseCode = "400", description = "bad name, role or password (problem JSON)")
    @APIResponse(responseCode = "409", description = "the name is taken (problem JSON)")
    public Response add(NewUser body) {
        if (body == null || body.name() == null || body.role() == null || body.password() == null) {
            throw ProblemException.badRequest("expected a JSON body {\"name\": ..., \"role\": \"viewer|operator|admin\", \"password\": ...}");
        }
        Role role = role(body.role());
        run(() -> accounts.addUser(body.name(), role, body.password(), currentUser.actor()));
        return Response.created(URI.create("/api/v1/users/" + body.name())).entity(User.of(accounts.user(body.name()).orElseThrow())).build();
    }

    @PATCH
    @Path("/users/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Change an account's role, disable or enable it, or set its password")
    @APIResponse(responseCode = "404", description = "no such user (problem JSON)")
    @APIResponse(responseCode = "409", description = "it would leave no active admin (problem JSON)")
    public User change(@PathParam("name") String name, UserChange body) {
        if (body == null || (body.role() == null && body.disabled() == null && body.password() == null)) {
            throw ProblemException.badRequest("expected a JSON body with any of {\"role\": ..., \"disabled\": true|false, \"password\": ...}");
        }
        existing(name);
        Role role = body.role() == null ? null : role(body.role());
        // All or nothing: a refused password must not leave the new role applied (issue 14, item 2).
        run(() -> accounts.change(name, new AccountService.AccountChange(role, body.disabled(), body.password()), currentUser.actor()));
        return User.of(existing(name));
    }

    @DELETE
    @Path("/users/{name}")
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Remove an account with its sessions and API tokens")
    @APIResponse(responseCode = "204", description = "removed")
    public Response remove(@PathParam("name") String name) {
        existing(name);
        run(() -> accounts.removeUser(name, currentUser.actor()));
        return Response.noContent().build();
    }

    @GET
    @Path("/users/{name}/tokens")
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "The account's API tokens (never the tokens themselves)")
    public List<Token> tokens(@PathParam("name") String name) {
        existing(name);
        return accounts.tokens(name).stream().map(Token::of).toList();
    }

    @POST
    @Path("/users/{name}/tokens")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Create an API token for the account; the answer is the only place the token appears")
    @APIResponse(responseCode = "201", description = "{id, user, name, token, expires}")
    public Response createToken(@PathParam("name") String name, NewToken body) {
        if (body == null || body.name() == null) {
            throw ProblemException.badRequest("expected a JSON body {\"name\": ..., \"expiresInDays\": N (optional)}");
        }
        if (body.expiresInDays() != null && (body.expiresInDays() < 1 || body.expiresInDays() > MAXIMUM_TOKEN_DAYS)) {
            throw ProblemException.badRequest("'expiresInDays' must be 1 to " + MAXIMUM_TOKEN_DAYS + " (ten years), was " + body.expiresInDays());
        }
        existing(name);
        Duration lifetime = body.expiresInDays() == null ? null : Duration.ofDays(body.expiresInDays());
        AccountService.IssuedToken[] issued = new AccountService.IssuedToken[1];
        run(() -> issued[0] = accounts.createToken(name, body.name(), lifetime, currentUser.actor()));
        AccountService.IssuedToken token = issued[0];
        return Response.status(201).header("Cache-Control", "no-store")
                .entity(new IssuedToken(token.id(), token.user(), token.name(), token.token(), token.expires())).build();
    }

    @DELETE
    @Path("/tokens/{id}")
    @RolesAllowed(Roles.ADMIN)
    @Operation(summary = "Revoke an API token")
    @APIResponse(responseCode = "204", description = "revoked")
    @APIResponse(responseCode = "404", description = "no such token (problem JSON)")
    public Response revoke(@PathParam("id") long id) {
        if (accounts.tokens(null).stream().noneMatch(token -> token.id() == id)) {
            throw new ProblemException(404, "Not Found", "no API token with id " + id);
        }
        run(() -> accounts.revokeToken(id, currentUser.actor()));
        return Response.noContent().build();
    }

    private Account existing(String name) {
        return accounts.user(name).orElseThrow(() -> new ProblemException(404, "Not Found", "no user named '" + name + "'"));
    }

    private static Role role(String text) {
        try {
            return Role.parse(text);
        } catch (IllegalArgumentException e) {
            throw ProblemException.badRequest(e.getMessage());
        }
    }

    /** Bad input is a 400, a refusal by the current state (name taken, last admin) a 409. */
    private static void run(Runnable change) {
        try {
            change.run();
        } catch (AccountException e) {
            throw e.invalidInput() ? ProblemException.badRequest(e.getMessage()) : new ProblemException(409, "Conflict", e.getMessage());
        }
    }
}
