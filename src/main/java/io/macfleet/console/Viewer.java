package io.macfleet.console;

/**
 * Who is looking at the console, as the layout and the actions need it.
 *
 * @param name the signed-in user's name, or null when the service runs without accounts
 * @param role viewer, operator or admin; null without accounts
 * @param csrfToken sent back with every state-changing request; null without accounts
 * @param operator may take actions (confirm operator steps)
 */
public record Viewer(String name, String role, String csrfToken, boolean operator) {

    public static Viewer anonymous() {
        return new Viewer(null, null, null, false);
    }

    public boolean signedIn() {
        return name != null;
    }
}
