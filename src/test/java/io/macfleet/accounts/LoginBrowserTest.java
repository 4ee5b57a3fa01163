package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.browser.Browser;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Signing in through the login form in real headless Chromium (Debian's chromium and chromedriver, never a
 * download): a wrong password is refused, the right one signs in, signing out works. Screenshots go to
 * target/screenshots/.
 */
@QuarkusTest
class LoginBrowserTest {

    @TestHTTPResource("/")
    URL root;

    static Browser chromium;
    static WebDriver browser;

    @BeforeAll
    static void startBrowser() throws Exception {
        // The base URL is the test port's, known only per test instance: pages are opened with full URLs below.
        chromium = Browser.open("http://127.0.0.1");
        browser = chromium.driver;
    }

    @AfterAll
    static void stopBrowser() {
        if (chromium != null) {
            chromium.close();
        }
    }

    private String url(String path) {
        // 127.0.0.1 rather than localhost: loopback IPv4 only, whatever localhost resolves to.
        return "http://127.0.0.1:" + root.getPort() + path;
    }

    private void screenshot(String name) throws Exception {
        chromium.screenshot(name);
    }

    private void signIn(String user, String password) {
        chromium.signIn(user, password);
    }

    @Test
    void aWrongPasswordIsRefusedTheRightOneSignsInAndOut() throws Exception {
        String user = TestAccounts.user(Role.OPERATOR);
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(20));

        browser.get(url("/account"));
        wait.until(ExpectedConditions.urlContains("/login?next="));
        assertThat(browser.findElement(By.id("login-form")).isDisplayed()).isTrue();
        screenshot("login-page");

        signIn(user, "not the right password");
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login-error")));
        assertThat(browser.findElement(By.id("login-error")).getText()).isEqualTo("Wrong user name or password.");
        assertThat(browser.manage().getCookieNamed(AccountsAuthenticationMechanism.SESSION_COOKIE)).isNull();
        screenshot("login-wrong-password");

        signIn(user, TestAccounts.PASSWORD);
        wait.until(ExpectedConditions.urlToBe(url("/account")));
        assertThat(browser.findElement(By.id("current-user")).getText()).isEqualTo(user);
        assertThat(browser.findElement(By.id("current-role")).getText()).isEqualTo("operator");
        var cookie = browser.manage().getCookieNamed(AccountsAuthenticationMechanism.SESSION_COOKIE);
        assertThat(cookie).isNotNull();
        assertThat(cookie.isHttpOnly()).isTrue();
        assertThat(cookie.getSameSite()).isEqualTo("Lax");
        screenshot("account-signed-in");

        browser.findElement(By.id("sign-out")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("signed-out")));
        assertThat(browser.manage().getCookieNamed(AccountsAuthenticationMechanism.SESSION_COOKIE)).isNull();
        browser.get(url("/account"));
        wait.until(ExpectedConditions.urlContains("/login?next="));
        screenshot("login-after-sign-out");
    }
}
