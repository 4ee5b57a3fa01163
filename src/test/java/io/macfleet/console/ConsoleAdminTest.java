package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.AccountService;
import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.macfleet.inventory.DesiredStateStore;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * The admin's pages: accounts (add, change role, disable, remove, with the last-admin rule) and the inventory (plan
 * and apply a pasted document; an invalid one changes nothing). Viewers and operators get neither; a POST without
 * the session's CSRF token is refused. Then the same in Chromium, with screenshots.
 */
@QuarkusTest
class ConsoleAdminTest {

    private static final String INVENTORY = """
            defaults:
              ssh: {user: admin, privateKey: "env:MACFLEET_TEST_KEY"}
            clusters:
              - name: llm-console
                macosVersion: "26.2"
                topology: {kind: full-mesh}
            machines:
              - name: studio-[01-03]
                address: 192.168.70.[11-13]
                cluster: llm-console
            """;

    @TestHTTPResource("/")
    URL base;

    @Inject
    AccountService accounts;

    @Inject
    DesiredStateStore store;

    @BeforeEach
    void forgetFailures() {
        TestAccounts.forgetFailedLogins();
    }

    private static Document page(TestAccounts.Session session, String path, int status) {
        return Jsoup.parse(session.withoutCsrf().get(path).then().statusCode(status).extract().asString());
    }

    @Test
    void viewersAndOperatorsGetNeitherPageNorAction() {
        for (Role role : new Role[] {Role.VIEWER, Role.OPERATOR}) {
            TestAccounts.Session session = TestAccounts.login(role);
            Document overview = page(session, "/console", 200);
            assertThat(overview.select("nav[aria-label=Main] a").eachText()).containsExactly("Overview", "Clusters", "Runs", "OS updates", "Supervision", "Models", "Audit", "Inventory");
            assertThat(page(session, "/console/accounts", 403).text()).contains("this needs the role admin");
            assertThat(page(session, "/console/inventory", 200).select("form#inventory-form")).isEmpty();
            session.request().formParam("name", "eve").formParam("role", "admin").formParam("password", "long enough password")
                    .formParam("repeat", "long enough password").post("/console/accounts").then().statusCode(403);
            session.request().formParam("yaml", INVENTORY).formParam("action", "apply").post("/console/inventory").then().statusCode(403);
        }
        assertThat(accounts.user("eve")).isEmpty();
        assertThat(store.clusters()).isEmpty();
    }

    @Test
    void anAdminManagesAccountsWithTheSameRulesAsTheCli() {
        TestAccounts.Session admin = TestAccounts.login(Role.ADMIN);
        Document list = page(admin, "/console/accounts", 200);
        assertThat(list.select("nav[aria-label=Main] a").eachText()).contains("Accounts");
        assertThat(list.select("table.accounts tr[data-user=" + admin.user() + "] th").text()).contains("(you)");

        admin.request().formParam("name", "ivan").formParam("role", "operator").formParam("password", "long enough password")
                .formParam("repeat", "long enough password").post("/console/accounts").then().statusCode(303)
                .header("Location", org.hamcrest.Matchers.containsString("/console/accounts?done="));
        assertThat(accounts.user("ivan")).hasValueSatisfying(account -> assertThat(account.role()).isEqualTo(Role.OPERATOR));

        // Refusals show the page again with the reason and the form as typed (never the password).
        Document mismatch = Jsoup.parse(admin.request().formParam("name", "judy").formParam("role", "viewer").formParam("password", "long enough password")
                .formParam("repeat", "another long password").post("/console/accounts").then().statusCode(400).extract().asString());
        assertThat(mismatch.select("#accounts-error").text()).isEqualTo("The two passwords differ; type the same password twice.");
        assertThat(mismatch.select("form#add-user input[name=name]").val()).isEqualTo("judy");
        assertThat(mismatch.select("form#add-user input[name=password]").val()).isEmpty();
        Document weak = Jsoup.parse(admin.request().formParam("name", "judy").formParam("role", "viewer").formParam("password", "short")
                .formParam("repeat", "short").post("/console/accounts").then().statusCode(400).extract().asString());
        assertThat(weak.select("#accounts-error").text()).contains("too short");
        Document taken = Jsoup.parse(admin.request().formParam("name", "ivan").formParam("role", "viewer").formParam("password", "long enough password")
                .formParam("repeat", "long enough password").post("/console/accounts").then().statusCode(409).extract().asString());
        assertThat(taken.select("#accounts-error").text()).contains("already exists");
        assertThat(accounts.user("judy")).isEmpty();

        admin.request().formParam("role", "viewer").post("/console/accounts/ivan/role").then().statusCode(303);
        assertThat(accounts.user("ivan").orElseThrow().role()).isEqualTo(Role.VIEWER);
        admin.request().formParam("disabled", "true").post("/console/accounts/ivan/disabled").then().statusCode(303);
        assertThat(accounts.user("ivan").orElseThrow().disabled()).isTrue();
        admin.request().post("/console/accounts/ivan/remove").then().statusCode(303);
        assertThat(accounts.user("ivan")).isEmpty();
        admin.request().post("/console/accounts/nobody/remove").then().statusCode(409);

        // A forged request: the admin's cookie without the CSRF token.
        admin.withoutCsrf().formParam("name", "trudy").formParam("role", "admin").formParam("password", "long enough password")
                .formParam("repeat", "long enough password").post("/console/accounts").then().statusCode(403);
        assertThat(accounts.user("trudy")).isEmpty();

        // Every change is in the audit log with the admin's name.
        Document audit = page(admin, "/console/audit?actor=" + admin.user() + "&text=ivan", 200);
        assertThat(audit.select("table.audit tbody tr td").eachText()).contains("user.add", "user.set-role", "user.disable", "user.remove");
    }

    @Test
    void anAdminPlansAndAppliesAnInventoryAnInvalidOneChangesNothing() {
        TestAccounts.Session admin = TestAccounts.login(Role.ADMIN);
        Document empty = page(admin, "/console/inventory", 200);
        assertThat(empty.select("#applied-machines").text()).isEqualTo("0");

        String broken = INVENTORY.replace("cluster: llm-console", "cluster: llm-elsewhere");
        Document invalid = Jsoup.parse(admin.request().formParam("yaml", broken).formParam("action", "apply").post("/console/inventory")
                .then().statusCode(400).extract().asString());
        assertThat(invalid.select("#inventory-errors").text()).contains("Nothing was changed").contains("inventory.yaml:10:").contains("llm-elsewhere");
        assertThat(invalid.select("textarea[name=yaml]").text()).contains("llm-elsewhere");
        assertThat(store.clusters()).isEmpty();

        Document plan = Jsoup.parse(admin.request().formParam("yaml", INVENTORY).formParam("action", "plan").post("/console/inventory")
                .then().statusCode(200).extract().asString());
        assertThat(plan.select("#inventory-plan").text()).contains("Plan: 4 to add, 0 to change, 0 to remove.");
        assertThat(plan.select("#inventory-plan li[data-action=add]")).hasSize(4);
        assertThat(store.clusters()).isEmpty();

        Document applied = Jsoup.parse(admin.request().formParam("yaml", INVENTORY).formParam("action", "apply").post("/console/inventory")
                .then().statusCode(200).extract().asString());
        assertThat(applied.select("#inventory-plan").text()).contains("Applied: 4 added, 0 changed, 0 removed");
        assertThat(applied.select("#applied-machines").text()).isEqualTo("3");
        assertThat(applied.select("table.audit tbody").text()).contains("inventory.apply").contains(admin.user());
        assertThat(store.machines("llm-console")).hasSize(3);
    }

    @Test
    void inTheBrowserAnAdminAddsAUserAndPlansAnInventory() throws Exception {
        String admin = TestAccounts.user(Role.ADMIN);
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(admin, TestAccounts.PASSWORD);
            browser.driver.findElement(By.linkText("Accounts")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(ExpectedConditions.titleIs("Accounts · macfleet"));
            browser.driver.findElement(By.cssSelector("#add-user input[name=name]")).sendKeys("kim");
            new org.openqa.selenium.support.ui.Select(browser.driver.findElement(By.cssSelector("#add-user select[name=role]"))).selectByValue("operator");
            browser.driver.findElement(By.cssSelector("#add-user input[name=password]")).sendKeys("kim's long password");
            browser.driver.findElement(By.cssSelector("#add-user input[name=repeat]")).sendKeys("kim's long password");
            browser.driver.findElement(By.cssSelector("#add-user button[type=submit]")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(ExpectedConditions.visibilityOfElementLocated(By.id("accounts-message")));
            assertThat(browser.driver.findElement(By.id("accounts-message")).getText()).isEqualTo("Added kim as operator.");
            assertThat(browser.driver.findElement(By.cssSelector("table.accounts tr[data-user=kim]")).getText()).contains("operator").contains("active");
            browser.screenshot("accounts");

            browser.driver.findElement(By.linkText("Inventory")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(ExpectedConditions.titleIs("Inventory · macfleet"));
            // One more machine than the other tests apply: the plan names it whatever ran before.
            browser.script("document.getElementById('inventory-yaml').value = arguments[0];", INVENTORY.replace("[01-03]", "[01-04]").replace("[11-13]", "[11-14]"));
            browser.driver.findElement(By.cssSelector("#inventory-form button[value=plan]")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(ExpectedConditions.visibilityOfElementLocated(By.id("inventory-plan")));
            assertThat(browser.driver.findElement(By.id("inventory-plan")).getText()).contains("Plan:").contains("studio-04");
            browser.screenshot("inventory-plan");
        }
        assertThat(accounts.user("kim")).isPresent();
    }
}
