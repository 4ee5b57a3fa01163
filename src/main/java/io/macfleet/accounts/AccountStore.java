package io.macfleet.accounts;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.database.Jdbc;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Accounts, sessions, API tokens and failed logins in the database. Changes are written together with their
 * audit entry in one transaction.
 */
@ApplicationScoped
class AccountStore {

    /** What a valid session or token resolves to. */
    record Credential(String user, Role role, boolean disabled, String csrfToken, Instant lastSeen, Instant expires, String tokenName, long tokenId) {
    }

    private final DataSource dataSource;

    @Inject
    AccountStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    static OffsetDateTime time(Instant instant) {
        return instant == null ? null : OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet row, String column) throws SQLException {
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    // Users

    long countUsers() {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select count(*) from account_user", row -> row.getLong(1)).getFirst());
    }

    long countActiveAdmins(Connection connection) throws SQLException {
        return Jdbc.query(connection, "select count(*) from account_user where role = ? and disabled = false", row -> row.getLong(1), Role.ADMIN.id()).getFirst();
    }

    List<Account> users() {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select name, role, created_at, disabled from account_user order by name", AccountStore::account));
    }

    Optional<Account> user(String name) {
        return Jdbc.withConnection(dataSource, connection -> user(connection, name));
    }

    Optional<Account> user(Connection connection, String name) throws SQLException {
        return Jdbc.query(connection, "select name, role, created_at, disabled from account_user where name = ?", AccountStore::account, name)
                .stream().findFirst();
    }

    /** The stored hash, or empty for an unknown or disabled user. */
    Optional<String> passwordHashOfActiveUser(String name) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select password_hash from account_user where name = ? and disabled = false", row -> row.getString(1), name).stream().findFirst());
    }

    private static Account account(ResultSet row) throws SQLException {
        return new Account(row.getString("name"), Role.parse(row.getString("role")), instant(row, "created_at"), row.getBoolean("disabled"));
    }

    void insertUser(Connection connection, String name, Role role, String passwordHash, Instant now) throws SQLException {
        Jdbc.update(connection, "insert into account_user (name, role, password_hash, created_at, disabled) values (?, ?, ?, ?, false)",
                name, role.id(), passwordHash, time(now));
    }

    int deleteUser(Connection connection, String name) throws SQLException {
        // Sessions and tokens go with the user (on delete cascade).
        return Jdbc.update(connection, "delete from account_user where name = ?", name);
    }

    int updateRole(Connection connection, String name, Role role) throws SQLException {
        return Jdbc.update(connection, "update account_user set role = ? where name = ?", role.id(), name);
    }

    int updatePassword(Connection connection, String name, String passwordHash) throws SQLException {
        return Jdbc.update(connection, "update account_user set password_hash = ? where name = ?", passwordHash, name);
    }

    int updateDisabled(Connection connection, String name, boolean disabled) throws SQLException {
        return Jdbc.update(connection, "update account_user set disabled = ? where name = ?", disabled, name);
    }

    // Sessions

    void insertSession(Connection connection, String idHash, String user, String csrfToken, Instant now, Instant expires) throws SQLException {
        Jdbc.update(connection, "insert into account_session (id_hash, user_name, created_at, last_seen_at, expires_at, csrf_token) values (?, ?, ?, ?, ?, ?)",
                idHash, user, time(now), time(now), time(expires), csrfToken);
    }

    Optional<Credential> session(String idHash) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select s.user_name, u.role, u.disabled, s.csrf_token, s.last_seen_at, s.expires_at from account_session s"
                        + " join account_user u on u.name = s.user_name where s.id_hash = ?",
                row -> new Credential(row.getString(1), Role.parse(row.getString(2)), row.getBoolean(3), row.getString(4),
                        instant(row, "last_seen_at"), instant(row, "expires_at"), null, 0), idHash).stream().findFirst());
    }

    void touchSession(String idHash, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "update account_session set last_seen_at = ? where id_hash = ?", time(now), idHash));
    }

    int deleteSession(String idHash) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "delete from account_session where id_hash = ?", idHash));
    }

    int deleteSessionsOf(Connection connection, String user) throws SQLException {
        return Jdbc.update(connection, "delete from account_session where user_name = ?", user);
    }

    int deleteSessionsEndedBefore(Instant expiredBefore, Instant idleBefore) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "delete from account_session where expires_at <= ? or last_seen_at <= ?", time(expiredBefore), time(idleBefore)));
    }

    // API tokens

    long insertToken(Connection connection, String tokenHash, String user, String name, Instant now, Instant expires) throws SQLException {
        Jdbc.update(connection, "insert into api_token (token_hash, user_name, name, created_at, expires_at) values (?, ?, ?, ?, ?)",
                tokenHash, user, name, time(now), time(expires));
        return Jdbc.query(connection, "select id from api_token where token_hash = ?", row -> row.getLong(1), tokenHash).getFirst();
    }

    Optional<Credential> token(String tokenHash) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select t.user_name, u.role, u.disabled, t.expires_at, t.name, t.id, t.last_used_at from api_token t"
                        + " join account_user u on u.name = t.user_name where t.token_hash = ?",
                row -> new Credential(row.getString(1), Role.parse(row.getString(2)), row.getBoolean(3), null,
                        instant(row, "last_used_at"), instant(row, "expires_at"), row.getString(5), row.getLong(6)), tokenHash).stream().findFirst());
    }

    void touchToken(long id, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "update api_token set last_used_at = ? where id = ?", time(now), id));
    }

    List<ApiToken> tokens(String user) {
        String sql = "select id, user_name, name, created_at, last_used_at, expires_at from api_token"
                + (user == null ? "" : " where user_name = ?") + " order by user_name, name";
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, sql, AccountStore::apiToken,
                user == null ? new Object[0] : new Object[] {user}));
    }

    Optional<ApiToken> token(Connection connection, long id) throws SQLException {
        return Jdbc.query(connection, "select id, user_name, name, created_at, last_used_at, expires_at from api_token where id = ?",
                AccountStore::apiToken, id).stream().findFirst();
    }

    Optional<ApiToken> token(Connection connection, String user, String name) throws SQLException {
        return Jdbc.query(connection, "select id, user_name, name, created_at, last_used_at, expires_at from api_token where user_name = ? and name = ?",
                AccountStore::apiToken, user, name).stream().findFirst();
    }

    int deleteToken(Connection connection, long id) throws SQLException {
        return Jdbc.update(connection, "delete from api_token where id = ?", id);
    }

    private static ApiToken apiToken(ResultSet row) throws SQLException {
        return new ApiToken(row.getLong("id"), row.getString("user_name"), row.getString("name"), instant(row, "created_at"),
                instant(row, "last_used_at"), instant(row, "expires_at"));
    }

    // Failed logins

    void insertFailure(String user, String address, Instant at) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "insert into login_failure (user_name, client_address, attempted_at) values (?, ?, ?)", user, address, time(at)));
    }

    /** Times of the failed logins since {@code since} for this user name or from this address, oldest first, one list each. */
    /**
     * The failure series that throttle a login: of this user name from this address, and from this address for
     * any name. Never of the name alone: that would let anyone lock anyone out (issue 14).
     */
    List<List<Instant>> failuresSince(String user, String address, Instant since) {
        return Jdbc.withConnection(dataSource, connection -> List.of(
                Jdbc.query(connection, "select attempted_at from login_failure where user_name = ? and client_address = ? and attempted_at > ? order by attempted_at",
                        row -> instant(row, "attempted_at"), user, address, time(since)),
                Jdbc.query(connection, "select attempted_at from login_failure where client_address = ? and attempted_at > ? order by attempted_at",
                        row -> instant(row, "attempted_at"), address, time(since))));
    }

    /** How many logins failed anywhere since then (the global brake). */
    int countFailuresSince(Instant since) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select count(*) as failures from login_failure where attempted_at > ?", row -> row.getInt("failures"), time(since)).getFirst());
    }

    /** After a successful login: the failures of this name from this address are forgotten, not those from elsewhere. */
    void deleteFailuresOf(String user, String address) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "delete from login_failure where user_name = ? and client_address = ?", user, address));
    }

    void deleteFailuresBefore(Instant before) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "delete from login_failure where attempted_at <= ?", time(before)));
    }

    // Transactions with their audit entry

    <T> T inTransaction(Jdbc.Work<T> work) {
        return Jdbc.inTransaction(dataSource, work);
    }

    static void audit(Connection connection, String actor, String action, String detail, AuditEvent.Outcome outcome) throws SQLException {
        JdbcAuditLog.record(connection, new AuditEvent(Instant.now(), actor, null, action, detail, outcome));
    }
}
