package io.macfleet.node.grammar;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Compiled grammars by a text key (a schema's JSON, a tool list's), the 64 most recently used. Agents send the same
 * schema or tools with every turn; the same {@link Node} then also finds the masks earlier requests computed
 * ({@link GrammarConstraint} shares them per grammar and vocabulary).
 */
public final class GrammarCache {
    private static final int ENTRIES = 64;
    private static final Map<String, Node> CACHE = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Node> eldest) {
            return size() > ENTRIES;
        }
    };

    private GrammarCache() {
    }

    /** The grammar cached under {@code key}, compiled by {@code compile} the first time (its exceptions pass through). */
    public static Node get(String key, Supplier<Node> compile) {
        synchronized (CACHE) {
            Node cached = CACHE.get(key);
            if (cached != null) {
                return cached;
            }
        }
        Node compiled = compile.get();
        synchronized (CACHE) {
            Node raced = CACHE.putIfAbsent(key, compiled);
            return raced != null ? raced : compiled;
        }
    }
}
