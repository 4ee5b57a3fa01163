package io.macfleet.simulator;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes JSON the way system_profiler does: keys sorted, two-space indentation, {@code "key" : value}, non-ASCII
 * escaped as {@code \\uXXXX}, slashes left alone.
 */
public final class AppleJson {
    private AppleJson() {
    }

    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, 0, out);
        return out.append('\n').toString();
    }

    private static void write(Object value, int depth, StringBuilder out) {
        switch (value) {
            case Map<?, ?> map -> {
                out.append("{\n");
                var sorted = new TreeMap<String, Object>();
                map.forEach((k, v) -> sorted.put(String.valueOf(k), v));
                int i = 0;
                for (var entry : sorted.entrySet()) {
                    indent(depth + 1, out);
                    string(entry.getKey(), out);
                    out.append(" : ");
                    write(entry.getValue(), depth + 1, out);
                    out.append(++i < sorted.size() ? ",\n" : "\n");
                }
                indent(depth, out);
                out.append('}');
            }
            case List<?> list -> {
                out.append("[\n");
                for (int i = 0; i < list.size(); i++) {
                    indent(depth + 1, out);
                    write(list.get(i), depth + 1, out);
                    out.append(i + 1 < list.size() ? ",\n" : "\n");
                }
                indent(depth, out);
                out.append(']');
            }
            case Number number -> out.append(number);
            case Boolean bool -> out.append(bool);
            case null -> out.append("null");
            default -> string(value.toString(), out);
        }
    }

    private static void indent(int depth, StringBuilder out) {
        out.append("  ".repeat(depth));
    }

    private static void string(String text, StringBuilder out) {
        out.append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
