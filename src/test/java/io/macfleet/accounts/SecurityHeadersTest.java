package io.macfleet.accounts;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every answer carries the browser security headers (issue 14, item 3). */
@QuarkusTest
class SecurityHeadersTest {

    private static final List<String> CONSOLE_PAGES = List.of("/console", "/console/clusters", "/console/runs", "/console/audit",
            "/console/inventory", "/console/accounts", "/console/no-such-page");

    @Test
    void consolePagesLoginApiStaticFilesAndErrorsAllCarryTheHeaders() {
        TestAccounts.Session admin = TestAccounts.login(Role.ADMIN);
        for (String page : CONSOLE_PAGES) {
            check(page, admin.request().get(page));
        }
        check("/login", given().get("/login"));
        check("/console (signed out)", given().redirects().follow(false).get("/console"));
        check("/api/v1/machines (no token)", given().get("/api/v1/machines"));
        check("/api/v1/machines", TestAccounts.viewer().get("/api/v1/machines"));
        check("/console/static/console.css", given().get("/console/static/console.css"));
        Response script = given().get("/console/static/console.js");
        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.contentType()).startsWith("text/javascript");
        check("/console/static/console.js", script);
        check("/q/health", given().get("/q/health"));
        check("/nothing-here", given().get("/nothing-here"));
    }

    @Test
    void theConsoleHasNoInlineScriptOrInlineEventHandlerThePolicyWouldBlock() {
        TestAccounts.Session admin = TestAccounts.login(Role.ADMIN);
        for (String page : CONSOLE_PAGES) {
            String html = admin.request().get(page).asString();
            org.jsoup.nodes.Document document = org.jsoup.Jsoup.parse(html);
            assertThat(document.select("script:not([src])")).as(page + ": inline <script>").isEmpty();
            assertThat(document.select("style")).as(page + ": inline <style>").isEmpty();
            assertThat(document.select("[style]")).as(page + ": style attributes").isEmpty();
            document.getAllElements().forEach(element -> element.attributes().forEach(attribute ->
                    assertThat(attribute.getKey()).as(page + ": inline handler on <" + element.tagName() + ">").doesNotStartWith("on")));
        }
        String login = given().get("/login").asString();
        assertThat(org.jsoup.Jsoup.parse(login).select("script:not([src]), style, [style]")).isEmpty();
    }

    private static void check(String what, Response response) {
        assertThat(response.header("Content-Security-Policy")).as(what)
                .contains("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "form-action 'self'")
                .doesNotContain("unsafe-inline", "unsafe-eval");
        assertThat(response.header("X-Frame-Options")).as(what).isEqualTo("DENY");
        assertThat(response.header("X-Content-Type-Options")).as(what).isEqualTo("nosniff");
        assertThat(response.header("Referrer-Policy")).as(what).isEqualTo("same-origin");
    }
}
