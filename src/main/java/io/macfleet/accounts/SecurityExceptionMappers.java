package io.macfleet.accounts;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** 401 and 403 from {@code @RolesAllowed}: the login page or a friendly page for browsers, problem JSON for the API. */
class SecurityExceptionMappers {

    @Inject
    AccountService accounts;

    @Inject
    CurrentUser currentUser;

    @ServerExceptionMapper(value = {UnauthorizedException.class, AuthenticationFailedException.class})
    Uni<Response> unauthorized(UriInfo uri, HttpHeaders headers) {
        String path = uri.getPath();
        String query = uri.getRequestUri().getRawQuery();
        boolean htmx = headers.getHeaderString("HX-Request") != null;
        // Whether any account exists is a database read: off the event loop.
        return Uni.createFrom().item(() -> SecurityAnswers.unauthenticated(path, query, htmx, accounts.hasAccounts(), null).response())
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    @ServerExceptionMapper(ForbiddenException.class)
    Response forbidden(UriInfo uri, ResourceInfo resource) {
        return SecurityAnswers.forbidden(uri.getPath(), currentUser, "signed in as " + currentUser.name() + " with role "
                + currentUser.roleName() + "; this needs the role " + requiredRole(resource)).response();
    }

    /** The least role named by the method's or else the class's @RolesAllowed. */
    private static String requiredRole(ResourceInfo resource) {
        RolesAllowed allowed = null;
        if (resource != null && resource.getResourceMethod() != null) {
            allowed = resource.getResourceMethod().getAnnotation(RolesAllowed.class);
            if (allowed == null) {
                allowed = resource.getResourceClass().getAnnotation(RolesAllowed.class);
            }
        }
        if (allowed == null || allowed.value().length == 0) {
            return "that your account does not have";
        }
        return String.join(" or ", allowed.value()) + " (ask an admin: macfleet users set-role)";
    }
}
