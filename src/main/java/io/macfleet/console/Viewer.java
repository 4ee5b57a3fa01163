package io.macfleet.console;

import io.macfleet.accounts.CurrentUser;

/**
 * Who is looking at the console, as the layout and the actions need it.
 *
 * @param name the signed-in user's name, or null when nobody is signed in (error pages)
 * @param role viewer, operator or admin; null when nobody is signed in
 * @param csrfToken sent back with every state-changing request; null without a session
 * @param operator may take actions (start provisioning, confirm operator steps)
 * @param admin may manage accounts and apply the inventory
 */
public record Viewer(String name, String role, String csrfToken, boolean operator, boolean admin) {

    public static Viewer anonymous() {
        return new Viewer(null, null, null, false, false);
    }

    public static Viewer of(CurrentUser user) {
        if (!user.authenticated()) {
            return anonymous();
        }
        return new Viewer(user.name(), user.roleName(), user.csrfToken().isEmpty() ? null : user.csrfToken(), user.canOperate(), user.canAdminister());
    }

    public boolean signedIn() {
        return name != null;
    }
}
