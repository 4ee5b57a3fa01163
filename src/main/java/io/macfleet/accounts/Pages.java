package io.macfleet.accounts;

import io.quarkus.qute.Engine;
import io.quarkus.qute.HtmlEscaper;
import io.quarkus.qute.ReflectionValueResolver;
import io.quarkus.qute.Template;
import io.quarkus.qute.Variant;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The accounts pages (login, account, forbidden), Qute templates under accounts-templates/ rendered by a plain
 * Qute engine with HTML escaping of every value.
 */
final class Pages {

    /** The console's style sheet, shared so that the login page looks like the rest of the console. */
    static final String STYLESHEET = "/console/static/console.css";

    private static final Engine ENGINE = Engine.builder().addDefaults().addValueResolver(new ReflectionValueResolver())
            .addResultMapper(new HtmlEscaper(List.of(Variant.TEXT_HTML))).build();
    private static final Map<String, Template> TEMPLATES = new ConcurrentHashMap<>();

    private Pages() {
    }

    static String render(String name, Map<String, Object> data) {
        Template template = TEMPLATES.computeIfAbsent(name, Pages::load);
        var instance = template.instance().data("stylesheet", STYLESHEET);
        data.forEach(instance::data);
        return instance.render();
    }

    private static Template load(String name) {
        String resource = "accounts-templates/" + name + ".html";
        try (InputStream in = Pages.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the class path");
            }
            return ENGINE.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), Variant.forContentType(Variant.TEXT_HTML), name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
