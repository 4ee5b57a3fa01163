package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.browser.HeadlessChromium;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.File;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Signing in through the login form in real headless Chromium (Debian's chromium and chromedriver, never a
 * download): a wrong password is refused, the right one signs in, signing out works. Screenshots go to
 * target/screenshots/.
 */
@QuarkusTest
class LoginBrowserTest {

    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SCREENSHOTS = Path.of("target", "screenshots");

    @TestHTTPResource("/")
    URL root;

    static WebDriver browser;

    @BeforeAll
    static void startBrowser() throws Exception {
        Path chromium = HeadlessChromium.executable();
        if (!Files.isExecutable(CHROMEDRIVER)) {
            String message = "no chromedriver at " + CHROMEDRIVER + " (install Debian's chromium-driver package; .ci/run does)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        // Both paths given: Selenium Manager has nothing to look up or download.
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + Files.createTempDirectory("macfleet-chromium-"));
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    private String url(String path) {
        // 127.0.0.1 rather than localhost: loopback IPv4 only, whatever localhost resolves to.
        return "http://127.0.0.1:" + root.getPort() + path;
    }

    private void screenshot(String name) throws Exception {
        File shot = ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    private void signIn(String user, String password) {
        browser.findElement(By.id("username")).clear();
        browser.findElement(By.id("username")).sendKeys(user);
        browser.findElement(By.id("password")).sendKeys(password);
        browser.findElement(By.id("sign-in")).click();
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
