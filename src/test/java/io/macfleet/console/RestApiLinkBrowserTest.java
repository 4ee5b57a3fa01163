package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.time.Duration;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * The console's "REST API" link opens a working Swagger UI: the page's own start-up script runs under the
 * Content-Security-Policy and the API's operations are listed. It is part of the packaged service, not only dev mode.
 */
@QuarkusTest
class RestApiLinkBrowserTest {

    @TestHTTPResource("/")
    URL base;

    @Test
    void restApiLinkShowsTheOperations() throws Exception {
        assertThat(ConfigProvider.getConfig().getOptionalValue("quarkus.swagger-ui.always-include", Boolean.class)).contains(true);
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.VIEWER), TestAccounts.PASSWORD);
            browser.go("/console");
            browser.click("footer a[href='/q/swagger-ui']");

            browser.waitUpTo(Duration.ofSeconds(30)).until(driver -> browser.count(".swagger-ui .opblock") > 0);
            assertThat(browser.text(".swagger-ui .info .title")).contains("macfleet API");
            assertThat(browser.count(".swagger-ui .opblock")).isGreaterThan(5);
            browser.screenshot("rest-api-swagger-ui");
        }
    }
}
