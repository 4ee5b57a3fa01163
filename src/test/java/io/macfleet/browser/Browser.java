package io.macfleet.browser;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven through Debian's chromedriver. Both paths are given explicitly, so Selenium
 * Manager never looks for (or downloads) a driver or a browser. Screenshots go to target/screenshots/. Without
 * chromium and chromedriver the test is skipped, or fails when CI=true.
 */
public final class Browser implements AutoCloseable {

    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target", "screenshots");
    private static final int WIDTH = 1440;

    public final WebDriver driver;
    private final String baseUrl;
    private final Path profile;

    private Browser(WebDriver driver, String baseUrl, Path profile) {
        this.driver = driver;
        this.baseUrl = baseUrl;
        this.profile = profile;
    }

    public static Browser open(String baseUrl) throws IOException {
        Path chromium = HeadlessChromium.executable();
        if (!Files.isExecutable(CHROMEDRIVER)) {
            String message = "no chromedriver at " + CHROMEDRIVER + " (install Debian's chromium-driver package; .ci/run does)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        Logger.getLogger("org.openqa.selenium").setLevel(Level.WARNING);
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        Path profile = Files.createTempDirectory("macfleet-console-chromium-");
        ChromeOptions options = new ChromeOptions().setBinary(chromium.toFile())
                .addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                        "--window-size=" + WIDTH + ",900", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        return new Browser(driver, baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl, profile);
    }

    public void go(String path) {
        driver.get(baseUrl + path);
    }

    public String url(String path) {
        return baseUrl + path;
    }

    /** Fills in the login form the browser is on and submits it. */
    public void signIn(String user, String password) {
        driver.findElement(By.id("username")).clear();
        driver.findElement(By.id("username")).sendKeys(user);
        driver.findElement(By.id("password")).sendKeys(password);
        driver.findElement(By.id("sign-in")).click();
    }

    /** Signs in through the login page and waits until the browser left it. */
    public void signInAndWait(String user, String password) {
        go("/login");
        signIn(user, password);
        waitUpTo(Duration.ofSeconds(20)).until(driver -> !driver.getCurrentUrl().contains("/login"));
    }

    /** A wait that looks again when htmx replaced the element it was reading (live regions are swapped every few seconds). */
    public WebDriverWait waitUpTo(Duration duration) {
        WebDriverWait wait = new WebDriverWait(driver, duration);
        wait.ignoring(StaleElementReferenceException.class);
        return wait;
    }

    /**
     * The text of the first element matching the CSS selector, read in one step inside the page (so a swap by htmx
     * between finding and reading cannot make it stale), or null when nothing matches.
     */
    public String text(String css) {
        return (String) script("var element = document.querySelector(arguments[0]); return element === null ? null : element.innerText.trim();", css);
    }

    /** The value of an attribute of every element matching the CSS selector, in document order, read in one step. */
    @SuppressWarnings("unchecked")
    public List<String> attributes(String css, String attribute) {
        return (List<String>) script("var name = arguments[1];"
                + " return Array.from(document.querySelectorAll(arguments[0])).map(function (e) { return e.getAttribute(name); });", css, attribute);
    }

    /** How many elements match the CSS selector. */
    public long count(String css) {
        return ((Number) script("return document.querySelectorAll(arguments[0]).length;", css)).longValue();
    }

    /** Clicks the first element matching the CSS selector, finding it again if a live region was swapped meanwhile. */
    public void click(String css) {
        waitUpTo(Duration.ofSeconds(10)).until(driver -> {
            driver.findElement(By.cssSelector(css)).click();
            return true;
        });
    }

    public Object script(String script, Object... arguments) {
        return ((JavascriptExecutor) driver).executeScript(script, arguments);
    }

    /** The whole page, not only the window (Chromium's own full-page capture through chromedriver). */
    public Path screenshot(String name) throws IOException {
        Files.createDirectories(SCREENSHOTS);
        ChromeDriver chrome = (ChromeDriver) driver;
        long height = ((Number) script("return Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")).longValue();
        Map<String, Object> shot = chrome.executeCdpCommand("Page.captureScreenshot", Map.of("format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", WIDTH, "height", Math.min(height, 8000), "scale", 1)));
        Path file = SCREENSHOTS.resolve(name + ".png");
        Files.write(file, Base64.getDecoder().decode((String) shot.get("data")));
        return file;
    }

    @Override
    public void close() {
        driver.quit();
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A temporary profile left behind is harmless.
        }
    }
}
