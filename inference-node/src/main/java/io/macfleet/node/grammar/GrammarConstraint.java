package io.macfleet.node.grammar;

import io.macfleet.node.engine.TokenConstraint;
import io.macfleet.node.tokenizer.Tokenizer;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * A {@link Node} grammar applied to a vocabulary: the mask of allowed tokens is the automaton walked over the
 * {@link TokenTrie}. Masks are cached by automaton state, since inside a string or between values the same state
 * comes back token after token.
 */
public final class GrammarConstraint implements TokenConstraint {
    /** Masks kept per grammar: 128 of a 150k vocabulary are 2.4 MB. */
    private static final int CACHED_MASKS = 128;

    private final TokenTrie trie;
    private final java.util.function.IntFunction<byte[]> decoder;
    private Set<Automaton.Stack> state;
    /** Masks by state, shared by every constraint of this grammar on this vocabulary (guarded by itself). */
    private final Map<Set<Automaton.Stack>, BitSet> masks;
    /**
     * Per vocabulary, the masks of the 16 grammars used last (by identity: {@link GrammarCache} hands out the same
     * node for the same schema). Bounded rather than weak: the states in a mask map refer to their grammar.
     */
    private static final Map<TokenTrie, Map<Node, Map<Set<Automaton.Stack>, BitSet>>> SHARED = new WeakHashMap<>();
    private static final int SHARED_GRAMMARS = 16;
    private BitSet current;
    /** Trie walks this constraint did (the rest came from the shared masks); for tests. */
    int walks;

    public GrammarConstraint(Node grammar, Tokenizer tokenizer) {
        this(grammar, TokenTrie.of(tokenizer), tokenizer::decode);
    }

    /** On a trie built elsewhere (the benchmark's synthetic vocabulary); {@code decoder} gives a token's bytes. */
    GrammarConstraint(Node grammar, TokenTrie trie, java.util.function.IntFunction<byte[]> decoder) {
        this.decoder = decoder;
        this.trie = trie;
        this.state = Automaton.start(grammar);
        synchronized (SHARED) {
            this.masks = SHARED.computeIfAbsent(trie, key -> new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Node, Map<Set<Automaton.Stack>, BitSet>> eldest) {
                    return size() > SHARED_GRAMMARS;
                }
            }).computeIfAbsent(grammar,
                    key -> new LinkedHashMap<>(16, 0.75f, true) {
                        @Override
                        protected boolean removeEldestEntry(Map.Entry<Set<Automaton.Stack>, BitSet> eldest) {
                            return size() > CACHED_MASKS;
                        }
                    });
        }
    }

    /** The tokens allowed next (computed once per state). */
    public BitSet allowed() {
        if (current == null) {
            synchronized (masks) {
                current = masks.get(state);
            }
            if (current == null) {
                current = walk(state);
                walks++;
                synchronized (masks) {
                    masks.put(state, current);
                }
            }
        }
        return current;
    }

    private BitSet walk(Set<Automaton.Stack> start) {
        BitSet allowed = new BitSet(trie.vocabularySize);
        int[] nodes = new int[64];
        Object[] states = new Object[64];
        int depth = 0;
        nodes[0] = 0;
        states[0] = canonical(start);
        while (depth >= 0) {
            int node = nodes[depth];
            @SuppressWarnings("unchecked")
            Set<Automaton.Stack> at = (Set<Automaton.Stack>) states[depth];
            depth--;
            for (int child = trie.firstChild[node]; child >= 0; child = trie.nextSibling[child]) {
                Set<Automaton.Stack> next = next(at, trie.label[child] & 0xFF);
                if (next == DEAD) {
                    continue;
                }
                for (int t = trie.tokensStart[child]; t < trie.tokensStart[child + 1]; t++) {
                    allowed.set(trie.tokens[t]);
                }
                if (trie.firstChild[child] >= 0) {
                    if (++depth == nodes.length) {
                        nodes = Arrays.copyOf(nodes, depth * 2);
                        states = Arrays.copyOf(states, depth * 2);
                    }
                    nodes[depth] = child;
                    states[depth] = next;
                }
            }
        }
        return allowed;
    }

    private static final Set<Automaton.Stack> DEAD = Set.of();
    /** Bounds the interned states (each walked-from state holds a 256-entry row, about 1 KB): a few MB per request at most. */
    private static final int CACHED_STATES = 2048;
    /**
     * Automaton states interned, and their transitions by byte: inside a string most bytes lead back to the same
     * state, so walking the trie there is an array lookup per edge instead of building a state.
     */
    private final Map<Set<Automaton.Stack>, Set<Automaton.Stack>> interned = new HashMap<>();
    private final IdentityHashMap<Set<Automaton.Stack>, Set<Automaton.Stack>[]> transitions = new IdentityHashMap<>();

    private Set<Automaton.Stack> canonical(Set<Automaton.Stack> state) {
        if (state.isEmpty()) {
            return DEAD;
        }
        if (interned.size() >= CACHED_STATES) {
            interned.clear();
            transitions.clear();
        }
        return interned.computeIfAbsent(state, key -> key);
    }

    @SuppressWarnings("unchecked")
    private Set<Automaton.Stack> next(Set<Automaton.Stack> state, int b) {
        Set<Automaton.Stack>[] row = transitions.get(state);
        if (row == null) {
            row = new Set[256];
            transitions.put(state, row);
        }
        Set<Automaton.Stack> next = row[b];
        if (next == null) {
            next = canonical(Automaton.advance(state, b));
            row[b] = next;
        }
        return next;
    }

    @Override
    public boolean mask(float[] logits) {
        BitSet allowed = allowed();
        int previous = -1;
        for (int id = allowed.nextSetBit(0); id >= 0; id = allowed.nextSetBit(id + 1)) {
            Arrays.fill(logits, previous + 1, Math.min(id, logits.length), Float.NEGATIVE_INFINITY);
            previous = id;
        }
        if (previous + 1 < logits.length) {
            Arrays.fill(logits, previous + 1, logits.length, Float.NEGATIVE_INFINITY);
        }
        return !allowed.isEmpty();
    }

    @Override
    public void accept(int token) {
        byte[] bytes = decoder.apply(token);
        Set<Automaton.Stack> next = state;
        for (byte b : bytes) {
            next = Automaton.advance(next, b & 0xFF);
        }
        if (next.isEmpty()) {
            throw new IllegalStateException("token " + token + " does not fit the grammar");
        }
        state = next;
        current = null;
    }

    /** Advances by text, as if generated (tool-call framing already in the prompt, tests). */
    public boolean acceptBytes(byte[] bytes) {
        Set<Automaton.Stack> next = state;
        for (byte b : bytes) {
            next = Automaton.advance(next, b & 0xFF);
            if (next.isEmpty()) {
                return false;
            }
        }
        state = next;
        current = null;
        return true;
    }

    @Override
    public boolean canEnd() {
        return Automaton.complete(state);
    }

    @Override
    public boolean mustEnd() {
        return canEnd() && allowed().isEmpty();
    }
}
