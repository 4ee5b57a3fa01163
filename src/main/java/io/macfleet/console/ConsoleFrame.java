package io.macfleet.console;

import io.macfleet.accounts.CurrentUser;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

/** What every console page of one request shares: who is looking (for the layout) and the error page. */
@RequestScoped
public class ConsoleFrame {

    private final CurrentUser user;

    @Inject
    public ConsoleFrame(CurrentUser user) {
        this.user = user;
    }

    Viewer viewer() {
        return Viewer.of(user);
    }

    /** The name audit entries record for what this user does. */
    String actor() {
        return user.actor();
    }

    Pages.Layout layout(String title, String section) {
        return new Pages.Layout(title, section, viewer());
    }

    Response error(int status, String heading, String message, String backUrl, String backLabel) {
        return Pages.error(viewer(), status, heading, message, backUrl, backLabel);
    }
}
