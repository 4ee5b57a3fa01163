package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.AccountService;
import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * The console still works in a real browser under the Content-Security-Policy (issue 14, item 3): its scripts
 * run (htmx refreshes, the inventory file loader, confirmations), and the browser reports no violation.
 */
@QuarkusTest
class ConsoleUnderContentSecurityPolicyTest {

    private static final String RECORD_VIOLATIONS = """
            window.cspViolations = window.cspViolations || [];
            document.addEventListener('securitypolicyviolation', function (e) {
              window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber);
            });""";

    @TestHTTPResource("/")
    URL base;

    @Inject
    AccountService accounts;

    @Test
    void scriptsRunAndNothingIsBlocked() throws Exception {
        String admin = TestAccounts.user(Role.ADMIN);
        if (accounts.user("csp-viewer").isEmpty()) {
            accounts.addUser("csp-viewer", Role.VIEWER, TestAccounts.PASSWORD, "test");
        }
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(admin, TestAccounts.PASSWORD);

            // htmx is loaded and swaps the live fleet table in (every 5 s).
            browser.go("/console");
            browser.script(RECORD_VIOLATIONS);
            browser.script("document.getElementById('fleet').setAttribute('data-swapped', 'no');"
                    + "document.body.addEventListener('htmx:afterSwap', function () { document.getElementById('fleet').setAttribute('data-swapped', 'yes'); });");
            browser.waitUpTo(Duration.ofSeconds(20)).until(driver -> "yes".equals(browser.script("return document.getElementById('fleet').getAttribute('data-swapped');")));
            assertThat(browser.script("return typeof htmx")).isEqualTo("object");
            assertThat((List<?>) browser.script("return window.cspViolations")).isEmpty();

            // console.js: a chosen file fills the inventory document.
            browser.go("/console/inventory");
            browser.script(RECORD_VIOLATIONS);
            // A chosen file, as the browser hands it to the page (DataTransfer), then the change event console.js listens to.
            browser.script("var input = document.getElementById('inventory-file'); var files = new DataTransfer();"
                    + "files.items.add(new File(['# loaded by console.js\\n'], 'fleet.yaml', {type: 'application/yaml'}));"
                    + "input.files = files.files; input.dispatchEvent(new Event('change', {bubbles: true}));");
            browser.waitUpTo(Duration.ofSeconds(10)).until(driver -> String.valueOf(browser.script("return document.getElementById('inventory-yaml').value")).contains("loaded by console.js"));
            assertThat((List<?>) browser.script("return window.cspViolations")).isEmpty();

            // console.js: removing an account asks first; dismissing keeps it.
            browser.go("/console/accounts");
            browser.driver.findElement(By.cssSelector("form[action='/console/accounts/csp-viewer/remove'] button")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(ExpectedConditions.alertIsPresent());
            assertThat(browser.driver.switchTo().alert().getText()).contains("Remove csp-viewer");
            browser.driver.switchTo().alert().dismiss();
            assertThat(accounts.user("csp-viewer")).isPresent();
        }
    }
}
