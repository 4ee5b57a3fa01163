package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;

/** Users, sessions, tokens and throttling on a migrated database, for the database tests of each kind (PostgreSQL). */
public final class AccountsDatabaseContract {

    private AccountsDatabaseContract() {
    }

    public static void usersSessionsTokensAndThrottling(DataSource dataSource) {
        AccountService accounts = new AccountService(new AccountStore(dataSource));
        accounts.sessionIdleTimeout = Duration.ofHours(8);
        accounts.sessionLifetime = Duration.ofHours(24);
        accounts.throttleFailures = 5;
        accounts.throttleWindow = Duration.ofMinutes(15);
        accounts.throttleDelay = Duration.ofSeconds(30);

        assertThat(accounts.hasAccounts()).isFalse();
        accounts.addUser("pat", Role.ADMIN, "a long enough password", "test");
        assertThatThrownBy(() -> accounts.addUser("pat", Role.VIEWER, "a long enough password", "test"))
                .isInstanceOf(AccountException.class).hasMessageContaining("already exists");
        Instant now = Instant.now();
        var signedIn = (LoginOutcome.SignedIn) accounts.login("pat", "a long enough password", "127.0.0.1", now);
        assertThat(accounts.session(signedIn.sessionId(), now.plusSeconds(120))).get()
                .satisfies(session -> assertThat(session.csrfToken()).isEqualTo(signedIn.csrfToken()));
        assertThat(accounts.session(signedIn.sessionId(), now.plus(Duration.ofHours(9)))).isEmpty();

        var token = accounts.createToken("pat", "ci", Duration.ofDays(1), "test");
        assertThat(accounts.apiToken(token.token(), now)).get().extracting(AccountStore.Credential::role).isEqualTo(Role.ADMIN);
        assertThat(accounts.tokens("pat")).singleElement().satisfies(listed -> assertThat(listed.lastUsed()).isNotNull());
        accounts.revokeToken(token.id(), "test");
        assertThat(accounts.apiToken(token.token(), now)).isEmpty();

        for (int attempt = 0; attempt < 5; attempt++) {
            accounts.login("pat", "wrong password", "10.1.1.1", now.plusSeconds(attempt));
        }
        assertThat(accounts.login("pat", "a long enough password", "10.1.1.1", now.plusSeconds(10))).isInstanceOf(LoginOutcome.Throttled.class);
        accounts.addUser("sam", Role.VIEWER, "a long enough password", "test");
        accounts.removeUser("sam", "test");
        assertThatThrownBy(() -> accounts.removeUser("pat", "test")).hasMessageContaining("last admin");
        accounts.sweep(now.plus(Duration.ofDays(2)));
    }
}
