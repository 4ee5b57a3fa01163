package io.macfleet.accounts;

import io.macfleet.audit.AuditEvent.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.config.LoginBrakeSettings;

/**
 * Accounts, sessions, API tokens and login throttling. Every change is audited with the acting user.
 */
@ApplicationScoped
public class AccountService {

    /** What the console and the API say while no account exists. */
    public static final String NO_ACCOUNTS_YET = "no accounts yet: run `macfleet users add NAME --role admin`";

    static final String REFUSED = "Wrong user name or password.";
    private static final Pattern USER_NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
    private static final Pattern TOKEN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    /** Last-seen and last-used times are written at most this often, not on every request. */
    private static final Duration TOUCH_INTERVAL = Duration.ofMinutes(1);

    private final AccountStore store;

    // From MacfleetConfig.Accounts (set by the constructor the container uses; tests set them directly).
    Duration sessionIdleTimeout;
    Duration sessionLifetime;
    int throttleFailures;
    Duration throttleWindow;
    Duration throttleDelay;

    /** The global brake (MacfleetConfig.Security); null in tests that build the service by hand. */
    LoginBrakeSettings brake;

    AccountService(AccountStore store) {
        this.store = store;
    }

    @Inject
    AccountService(AccountStore store, MacfleetConfig config) {
        this(store);
        MacfleetConfig.Accounts accounts = config.accounts();
        sessionIdleTimeout = accounts.sessionIdleTimeout();
        sessionLifetime = accounts.sessionLifetime();
        throttleFailures = accounts.loginThrottle().failures();
        throttleWindow = accounts.loginThrottle().window();
        throttleDelay = accounts.loginThrottle().delay();
        brake = config.security().loginBrake();
    }

    /** Once true, stays true: accounts are created by the CLI in another process, and rarely all removed. */
    private volatile boolean accountsSeen;

    /** False until the first account is created: the console and the API then say how to create one. */
    public boolean hasAccounts() {
        if (!accountsSeen) {
            accountsSeen = store.countUsers() > 0;
        }
        return accountsSeen;
    }

    // Users

    static String checkUserName(String name) {
        if (name == null || !USER_NAME.matcher(name).matches()) {
            throw AccountException.invalid("user name '" + name + "' is not valid: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit");
        }
        return name;
    }

    public List<Account> users() {
        return store.users();
    }

    public Optional<Account> user(String name) {
        return store.user(name);
    }

    public void addUser(String name, Role role, String password, String actor) {
        checkUserName(name);
        Passwords.check(password);
        String hash = Passwords.hash(password);
        store.inTransaction(connection -> {
            if (store.user(connection, name).isPresent()) {
                throw AccountException.refused("user '" + name + "' already exists (change it with `macfleet users set-role` or `users password`)");
            }
            store.insertUser(connection, name, role, hash, Instant.now());
            AccountStore.audit(connection, actor, "user.add", "user " + name + " with role " + role.id(), Outcome.SUCCESS);
            return null;
        });
    }

    public void removeUser(String name, String actor) {
        store.inTransaction(connection -> {
            Account account = existing(connection, name);
            if (account.role() == Role.ADMIN && !account.disabled() && store.countActiveAdmins(connection) == 1) {
                throw AccountException.refused("user '" + name + "' is the last admin; add another admin first");
            }
            store.deleteUser(connection, name);
            AccountStore.audit(connection, actor, "user.remove", "user " + name + " (" + account.role().id() + "), with its sessions and API tokens", Outcome.SUCCESS);
            return null;
        });
    }

    public void setRole(String name, Role role, String actor) {
        change(name, new AccountChange(role, null, null), actor);
    }

    /** A new password also ends the user's sessions: whoever knew the old one is signed out. */
    public void setPassword(String name, String password, String actor) {
        change(name, new AccountChange(null, null, password), actor);
    }

    public void setDisabled(String name, boolean disabled, String actor) {
        change(name, new AccountChange(null, disabled, null), actor);
    }

    /** Any of a new role, enabled/disabled and a new password (null: unchanged). */
    public record AccountChange(Role role, Boolean disabled, String password) {
    }

    /**
     * Applies all parts of a change or none: the password is checked before anything is written, the last-admin
     * rule is checked against the account as it will be after the whole change, and the parts are written in one
     * transaction (each audited).
     */
    public void change(String name, AccountChange change, String actor) {
        String hash = null;
        if (change.password() != null) {
            Passwords.check(change.password());
            hash = Passwords.hash(change.password());
        }
        String newHash = hash;
        store.inTransaction(connection -> {
            Account account = existing(connection, name);
            Role role = change.role() == null ? account.role() : change.role();
            boolean disabled = change.disabled() == null ? account.disabled() : change.disabled();
            boolean activeAdminBefore = account.role() == Role.ADMIN && !account.disabled();
            boolean activeAdminAfter = role == Role.ADMIN && !disabled;
            if (activeAdminBefore && !activeAdminAfter && store.countActiveAdmins(connection) == 1) {
                throw AccountException.refused("user '" + name + "' is the last admin; add another admin first");
            }
            if (change.role() != null) {
                store.updateRole(connection, name, role);
                AccountStore.audit(connection, actor, "user.set-role", "user " + name + ": " + account.role().id() + " -> " + role.id(), Outcome.SUCCESS);
            }
            if (change.disabled() != null) {
                store.updateDisabled(connection, name, disabled);
                int sessions = disabled ? store.deleteSessionsOf(connection, name) : 0;
                AccountStore.audit(connection, actor, disabled ? "user.disable" : "user.enable",
                        "user " + name + (disabled ? " (" + sessions + " session(s) ended; API tokens refused while disabled)" : ""), Outcome.SUCCESS);
            }
            if (newHash != null) {
                store.updatePassword(connection, name, newHash);
                int sessions = store.deleteSessionsOf(connection, name);
                AccountStore.audit(connection, actor, "user.password", "user " + name + " (" + sessions + " session(s) ended)", Outcome.SUCCESS);
            }
            return null;
        });
    }

    private Account existing(Connection connection, String name) throws SQLException {
        return store.user(connection, name).orElseThrow(() -> AccountException.refused("no user named '" + name + "' (see `macfleet users list`)"));
    }

    // API tokens

    /** A token just created: the only time the token itself is known. */
    public record IssuedToken(long id, String user, String name, String token, Instant expires) {
    }

    public IssuedToken createToken(String user, String name, Duration lifetime, String actor) {
        if (name == null || !TOKEN_NAME.matcher(name).matches()) {
            throw AccountException.invalid("token name '" + name + "' is not valid: 1 to 64 of A-Z a-z 0-9 . _ -");
        }
        if (lifetime != null && (lifetime.isNegative() || lifetime.isZero())) {
            throw AccountException.invalid("--expires must be a positive duration such as 30d, 12h or 90m");
        }
        String token = Secrets.newApiToken();
        Instant now = Instant.now();
        Instant expires = lifetime == null ? null : now.plus(lifetime);
        long id = store.inTransaction(connection -> {
            existing(connection, user);
            if (store.token(connection, user, name).isPresent()) {
                throw AccountException.refused("user '" + user + "' already has a token named '" + name + "' (revoke it first or pick another name)");
            }
            long created = store.insertToken(connection, Secrets.hash(token), user, name, now, expires);
            AccountStore.audit(connection, actor, "token.create", "token " + created + " '" + name + "' for user " + user
                    + (expires == null ? ", no expiry" : ", expires " + expires), Outcome.SUCCESS);
            return created;
        });
        return new IssuedToken(id, user, name, token, expires);
    }

    public List<ApiToken> tokens(String user) {
        return store.tokens(user);
    }

    public ApiToken revokeToken(long id, String actor) {
        return store.inTransaction(connection -> {
            ApiToken token = store.token(connection, id).orElseThrow(() -> AccountException.refused("no API token with id " + id + " (see `macfleet tokens list`)"));
            store.deleteToken(connection, id);
            AccountStore.audit(connection, actor, "token.revoke", "token " + id + " '" + token.name() + "' of user " + token.user(), Outcome.SUCCESS);
            return token;
        });
    }

    // Logging in and out

    LoginOutcome login(String name, String password, String clientAddress, Instant now) {
        String user = name == null ? "" : name.strip().toLowerCase(java.util.Locale.ROOT);
        String address = clientAddress == null ? "unknown" : clientAddress;
        String shownName = user.length() > 64 ? user.substring(0, 64) : user;
        Optional<Duration> wait = throttled(shownName, address, now);
        if (wait.isPresent()) {
            audit(shownName.isEmpty() ? "anonymous" : shownName, "login.throttled", "from " + address + ": refused for "
                    + wait.get().toSeconds() + " s more after repeated failures", Outcome.FAILURE);
            return new LoginOutcome.Throttled(wait.get());
        }
        Optional<String> hash = USER_NAME.matcher(user).matches() ? store.passwordHashOfActiveUser(user) : Optional.empty();
        if (!Passwords.matches(password, hash.orElse(null))) {
            store.insertFailure(shownName, address, now);
            audit(shownName.isEmpty() ? "anonymous" : shownName, "login", "from " + address + ": wrong user name or password", Outcome.FAILURE);
            return new LoginOutcome.Refused(REFUSED);
        }
        Account account = store.user(user).orElseThrow();
        String sessionId = Secrets.randomToken();
        String csrfToken = Secrets.randomToken();
        Instant expires = now.plus(sessionLifetime);
        store.inTransaction(connection -> {
            store.insertSession(connection, Secrets.hash(sessionId), user, csrfToken, now, expires);
            AccountStore.audit(connection, user, "login", "from " + address, Outcome.SUCCESS);
            return null;
        });
        store.deleteFailuresOf(user, address);
        return new LoginOutcome.SignedIn(account, sessionId, csrfToken, expires);
    }

    /**
     * After {@code failures} failed attempts within the window for this user name from this address, or from this
     * address for any names (then only for names that failed from this address themselves), attempts wait {@code delay} after the last failure, doubling with every further
     * failure, at most the window. The name alone never throttles: the right password from another address
     * still gets in. Against guessing spread over many addresses, the global brake ({@link LoginBrakeSettings})
     * slows down every address that has failed recently once failures pile up everywhere.
     */
    Optional<Duration> throttled(String user, String address, Instant now) {
        List<List<Instant>> failures = store.failuresSince(user, address, now.minus(throttleWindow));
        Duration longest = Duration.ZERO;
        for (List<Instant> series : failures) {
            if (series == failures.get(1) && failures.get(0).isEmpty()) {
                // The address's failures for any names hold only names that failed from there too: behind a proxy
                // that hides client addresses everybody has the proxy's address, and an attacker's failures must not
                // lock out an admin typing the right password. A sprayer still gets one guess per name, then waits.
                continue;
            }
            if (series.size() >= throttleFailures) {
                int extra = Math.min(series.size() - throttleFailures, 20);
                Duration delay = throttleDelay.multipliedBy(1L << extra);
                if (delay.compareTo(throttleWindow) > 0) {
                    delay = throttleWindow;
                }
                Duration remaining = Duration.between(now, series.getLast().plus(delay));
                if (remaining.compareTo(longest) > 0) {
                    longest = remaining;
                }
            }
        }
        List<Instant> fromAddress = failures.get(1);
        if (!longest.isPositive() && brake != null && !fromAddress.isEmpty()
                && fromAddress.getLast().isAfter(now.minus(brake.window()))
                && store.countFailuresSince(now.minus(brake.window())) > brake.failures()) {
            Duration remaining = Duration.between(now, fromAddress.getLast().plus(brake.delay()));
            if (remaining.compareTo(longest) > 0) {
                longest = remaining;
            }
        }
        return longest.isPositive() ? Optional.of(longest) : Optional.empty();
    }

    void logout(String sessionId, String user) {
        if (store.deleteSession(Secrets.hash(sessionId)) > 0) {
            audit(user, "logout", "session ended", Outcome.SUCCESS);
        }
    }

    /** The account behind a session id, if the session is live; refreshes its last-seen time now and then. */
    Optional<AccountStore.Credential> session(String sessionId, Instant now) {
        String idHash = Secrets.hash(sessionId);
        Optional<AccountStore.Credential> found = store.session(idHash);
        if (found.isEmpty()) {
            return found;
        }
        AccountStore.Credential session = found.get();
        if (session.disabled() || !now.isBefore(session.expires()) || !now.isBefore(session.lastSeen().plus(sessionIdleTimeout))) {
            store.deleteSession(idHash);
            return Optional.empty();
        }
        if (Duration.between(session.lastSeen(), now).compareTo(TOUCH_INTERVAL) > 0) {
            store.touchSession(idHash, now);
        }
        return found;
    }

    /** The account behind an API token, if the token is known, unexpired and its user enabled. */
    Optional<AccountStore.Credential> apiToken(String token, Instant now) {
        if (token == null || !token.startsWith(Secrets.TOKEN_PREFIX)) {
            return Optional.empty();
        }
        Optional<AccountStore.Credential> found = store.token(Secrets.hash(token));
        if (found.isEmpty()) {
            return found;
        }
        AccountStore.Credential credential = found.get();
        if (credential.disabled() || (credential.expires() != null && !now.isBefore(credential.expires()))) {
            return Optional.empty();
        }
        if (credential.lastSeen() == null || Duration.between(credential.lastSeen(), now).compareTo(TOUCH_INTERVAL) > 0) {
            store.touchToken(credential.tokenId(), now);
        }
        return found;
    }

    /** Forgets ended sessions and failures older than the throttle window. */
    void sweep(Instant now) {
        store.deleteSessionsEndedBefore(now, now.minus(sessionIdleTimeout));
        store.deleteFailuresBefore(now.minus(throttleWindow));
    }

    private void audit(String actor, String action, String detail, Outcome outcome) {
        store.inTransaction(connection -> {
            AccountStore.audit(connection, actor, action, detail, outcome);
            return null;
        });
    }

    // The demo

    /** What `macfleet demo` prints about its account. The password is set only when the demo just created it. */
    public record DemoAccount(String user, String password, Path passwordFile, Path tokenFile) {
    }

    /**
     * For `macfleet demo`: with no account yet, creates {@code admin} (role admin) with a random password and
     * writes it to {@code home/admin-password} (mode 600). Each start also issues a fresh API token "demo-cli" for
     * admin into {@code home/api-token} (mode 600), which `macfleet demo fault|recovery|machines` send. The
     * password is returned to be printed once, never logged.
     */
    public Optional<DemoAccount> prepareDemo(Path home) throws IOException {
        String password = null;
        Path passwordFile = home.resolve("admin-password");
        if (!hasAccounts()) {
            password = Secrets.randomToken();
            addUser("admin", Role.ADMIN, password, "demo");
            io.macfleet.secrets.PrivateFiles.write(passwordFile, password + "\n");
        }
        Optional<Account> admin = store.user("admin").filter(account -> account.role() == Role.ADMIN && !account.disabled());
        if (admin.isEmpty()) {
            return Optional.empty();
        }
        store.tokens("admin").stream().filter(token -> token.name().equals("demo-cli")).forEach(token -> revokeToken(token.id(), "demo"));
        Path tokenFile = home.resolve("api-token");
        io.macfleet.secrets.PrivateFiles.write(tokenFile, createToken("admin", "demo-cli", null, "demo").token() + "\n");
        return Optional.of(new DemoAccount("admin", password, Files.exists(passwordFile) ? passwordFile : null, tokenFile));
    }

    /** Written with mode 600 from the start: the secret is never readable by others, not even briefly. */
}
