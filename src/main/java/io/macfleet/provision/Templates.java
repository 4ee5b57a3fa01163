package io.macfleet.provision;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Placeholders in command arguments and file templates: {@code {{ machine.name }}}, {@code {{ cluster.name }}},
 * {@code {{ facts.macosVersion }}}, {@code {{ vars.key }}}, and {@code {{ secret machine.volumeOwner.password }}},
 * which resolves a secret reference of the inventory (env:NAME, file:PATH) and marks the argument secret: it is
 * sent to the machine but never logged, audited or stored. {@code {{ machine.volumeOwner.user or 'the volume owner' }}}
 * gives words to use when the machine has no such value (instructions for a person read well either way; a secret
 * has no fallback). Nothing else: no expressions, no loops.
 */
final class Templates {

    static final List<String> ROOTS = List.of("machine", "cluster", "facts", "vars");
    private static final Pattern ANY = Pattern.compile("\\{\\{(.*?)}}");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\s*(secret\\s+)?([A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z0-9_-]+)*)(?:\\s+or\\s+'([^']*)')?\\s*");

    /** Where placeholders get their values on one machine. */
    interface Variables {
        /** The value at the path (root first), or null when there is none. */
        Object lookup(List<String> path);

        /** Resolves a secret reference (env:NAME or file:PATH) to the secret. */
        String resolveSecret(String reference);
    }

    record Rendered(String text, boolean secret) {
    }

    private Templates() {
    }

    static boolean hasPlaceholder(String text) {
        return text.contains("{{");
    }

    /** Whether the text holds a {@code {{ secret ... }}} placeholder (checked after {@link #validate}). */
    static boolean hasSecret(String text) {
        Matcher matcher = ANY.matcher(text);
        while (matcher.find()) {
            Matcher placeholder = PLACEHOLDER.matcher(matcher.group(1));
            if (placeholder.matches() && placeholder.group(1) != null) {
                return true;
            }
        }
        return false;
    }

    /** Checks the placeholders' syntax and roots (at load time). */
    static void validate(String text) {
        Matcher matcher = ANY.matcher(text);
        int end = 0;
        while (matcher.find()) {
            Matcher placeholder = PLACEHOLDER.matcher(matcher.group(1));
            if (!placeholder.matches()) {
                throw new IllegalArgumentException("malformed placeholder '" + matcher.group() + "'; expected {{ machine.name }},"
                        + " {{ machine.volumeOwner.user or 'words when there is none' }} or {{ secret machine.volumeOwner.password }}");
            }
            if (placeholder.group(1) != null && placeholder.group(3) != null) {
                throw new IllegalArgumentException("a secret has no fallback: '" + matcher.group() + "'");
            }
            String root = placeholder.group(2).split("\\.")[0];
            if (!ROOTS.contains(root)) {
                throw new IllegalArgumentException("unknown placeholder root '" + root + "' in '" + matcher.group() + "'; expected one of " + ROOTS);
            }
            end = matcher.end();
        }
        if (text.indexOf("{{", end) >= 0) {
            throw new IllegalArgumentException("unclosed placeholder in '" + text + "'");
        }
    }

    static Rendered render(String text, Variables variables) {
        Matcher matcher = ANY.matcher(text);
        StringBuilder out = new StringBuilder();
        boolean secret = false;
        while (matcher.find()) {
            Matcher placeholder = PLACEHOLDER.matcher(matcher.group(1));
            if (!placeholder.matches()) {
                throw new StepFailedException("malformed placeholder '" + matcher.group() + "'");
            }
            List<String> path = List.of(placeholder.group(2).split("\\."));
            Object value = variables.lookup(path);
            if (value == null && placeholder.group(3) != null) {
                value = placeholder.group(3);
            }
            if (value == null || value instanceof Map<?, ?> || value instanceof List<?>) {
                throw new StepFailedException("placeholder {{ " + placeholder.group(2) + " }} has no " + (value == null ? "value" : "single value")
                        + " for this machine (set it in the inventory)");
            }
            String replacement = String.valueOf(value);
            if (placeholder.group(1) != null) {
                replacement = variables.resolveSecret(replacement);
                secret = true;
            }
            matcher.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        matcher.appendTail(out);
        return new Rendered(out.toString(), secret);
    }
}
