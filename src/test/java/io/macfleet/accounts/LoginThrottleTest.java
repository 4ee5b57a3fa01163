package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.config.LoginBrakeSettings;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Throttling per (user name, client address) with a global brake, and never a lockout of the right password from
 * another address (issue 14, item 5).
 */
@QuarkusTest
class LoginThrottleTest {

    private static final String ATTACKER = "203.0.113.9";
    private static final String ADMIN_DESK = "198.51.100.20";

    @Inject
    AccountService accounts;

    @Inject
    AccountStore store;

    @Inject
    io.macfleet.config.MacfleetConfig config;

    LoginBrakeSettings brake;

    @org.junit.jupiter.api.BeforeEach
    void brake() {
        brake = config.security().loginBrake();
    }

    @AfterEach
    void forgetFailures() {
        TestAccounts.forgetFailedLogins();
    }

    private void user(String name) {
        if (accounts.user(name).isEmpty()) {
            accounts.addUser(name, Role.ADMIN, TestAccounts.PASSWORD, "test");
        }
    }

    @Test
    void failuresFromOneAddressDoNotLockTheNameOutEverywhere() {
        user("victim-admin");
        Instant start = Instant.now();
        for (int attempt = 0; attempt < 5; attempt++) {
            assertThat(accounts.login("victim-admin", "wrong password " + attempt, ATTACKER, start.plusSeconds(attempt)))
                    .isInstanceOf(LoginOutcome.Refused.class);
        }
        // The attacker's address is throttled, even with the right password...
        assertThat(accounts.login("victim-admin", TestAccounts.PASSWORD, ATTACKER, start.plusSeconds(7)))
                .isInstanceOf(LoginOutcome.Throttled.class);
        // ...the admin at another address is not.
        assertThat(accounts.login("victim-admin", TestAccounts.PASSWORD, ADMIN_DESK, start.plusSeconds(8)))
                .isInstanceOf(LoginOutcome.SignedIn.class);
        // And the admin's success does not wipe the attacker's record.
        assertThat(accounts.throttled("victim-admin", ATTACKER, start.plusSeconds(9))).isPresent();
    }

    /**
     * Issue 29's probe: behind a reverse proxy without forwarding settings every login has the proxy's address; five
     * wrong passwords from anyone answered 429 to a correct admin. Now the attacker's names are held, the admin is not.
     */
    @Test
    void behindAProxyAnAttackersFailuresDoNotLockOutTheAdmin() {
        user("proxy-admin");
        String proxy = "127.0.0.1";
        Instant start = Instant.now();
        for (int attempt = 0; attempt < 5; attempt++) {
            assertThat(accounts.login("attacked-" + (attempt % 2), "wrong password " + attempt, proxy, start.plusSeconds(attempt)))
                    .isInstanceOf(LoginOutcome.Refused.class);
        }
        assertThat(accounts.login("attacked-0", "another guess", proxy, start.plusSeconds(6))).isInstanceOf(LoginOutcome.Throttled.class);
        assertThat(accounts.login("proxy-admin", TestAccounts.PASSWORD, proxy, start.plusSeconds(7))).isInstanceOf(LoginOutcome.SignedIn.class);
        // a sprayer gets one guess per new name, then that name waits too
        assertThat(accounts.login("sprayed", "guess", proxy, start.plusSeconds(8))).isInstanceOf(LoginOutcome.Refused.class);
        assertThat(accounts.login("sprayed", "guess 2", proxy, start.plusSeconds(9))).isInstanceOf(LoginOutcome.Throttled.class);
    }

    @Test
    void guessingSpreadOverManyAddressesHitsTheGlobalBrakeButACleanAddressGetsIn() {
        user("spread-victim");
        Instant now = Instant.now();
        // More failures than the brake allows, each from its own address (one guess each: no per-address throttle).
        for (int address = 0; address <= brake.failures(); address++) {
            store.insertFailure("spread-victim", "10.66." + address / 250 + "." + address % 250, now.minusSeconds(5));
        }
        String guesser = "10.66.0.1";
        assertThat(accounts.throttled("spread-victim", guesser, now))
                .hasValueSatisfying(wait -> assertThat(wait).isPositive().isLessThanOrEqualTo(brake.delay()));
        assertThat(accounts.login("spread-victim", "another guess", guesser, now)).isInstanceOf(LoginOutcome.Throttled.class);
        // The right password from an address that has not failed: signed in, brake or not.
        assertThat(accounts.login("spread-victim", TestAccounts.PASSWORD, ADMIN_DESK, now)).isInstanceOf(LoginOutcome.SignedIn.class);
        // Once the brake's delay has passed, the guesser may try again (and is slow again after that).
        assertThat(accounts.throttled("spread-victim", guesser, now.plus(brake.delay()).plusSeconds(1))).isEmpty();
        // Below the brake's count, a single failure costs nothing.
        TestAccounts.forgetFailedLogins();
        store.insertFailure("spread-victim", guesser, now.minusSeconds(5));
        assertThat(accounts.throttled("spread-victim", guesser, now)).isEmpty();
    }
}
