package io.macfleet.config;

import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * {@code macfleet.security.login-brake.*} in {@link MacfleetConfig}: the global brake on password guessing spread over many addresses (issue 14): once more than
 * {@code failures} logins failed anywhere within {@code window}, an address that itself failed within the window
 * waits {@code delay} after its last failure. An address without failures is never braked, so the right password
 * from a clean address always gets in, whatever an attacker does elsewhere.
 */
public interface LoginBrakeSettings {

    @WithDefault("100")
    int failures();

    @WithDefault("1M")
    Duration window();

    @WithDefault("10S")
    Duration delay();
}
