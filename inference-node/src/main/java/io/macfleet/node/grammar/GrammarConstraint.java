package io.macfleet.node.grammar;

import io.macfleet.node.engine.TokenConstraint;
import io.macfleet.node.tokenizer.Tokenizer;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * A {@link Node} grammar applied to a vocabulary: the mask of allowed tokens is the automaton walked over the
 * {@link TokenTrie}. Masks are cached by automaton state, since inside a string or between values the same state
 * comes back token after token.
 */
public final class GrammarConstraint implements TokenConstraint {
    private static final int CACHED_MASKS = 256;

    private final TokenTrie trie;
    private final Tokenizer tokenizer;
    private Set<Automaton.Stack> state;
    private final Map<Set<Automaton.Stack>, BitSet> masks = new HashMap<>();
    private BitSet current;

    public GrammarConstraint(Node grammar, Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
        this.trie = TokenTrie.of(tokenizer);
        this.state = Automaton.start(grammar);
    }

    /** The tokens allowed next (computed once per state). */
    public BitSet allowed() {
        if (current == null) {
            current = masks.get(state);
            if (current == null) {
                current = walk(state);
                if (masks.size() >= CACHED_MASKS) {
                    masks.clear();
                }
                masks.put(state, current);
            }
        }
        return current;
    }

    private BitSet walk(Set<Automaton.Stack> start) {
        BitSet allowed = new BitSet(trie.vocabularySize);
        ArrayDeque<Object[]> pending = new ArrayDeque<>();
        pending.push(new Object[]{0, start});
        while (!pending.isEmpty()) {
            Object[] item = pending.pop();
            int node = (int) item[0];
            @SuppressWarnings("unchecked")
            Set<Automaton.Stack> at = (Set<Automaton.Stack>) item[1];
            for (int child = trie.firstChild[node]; child >= 0; child = trie.nextSibling[child]) {
                Set<Automaton.Stack> next = Automaton.advance(at, trie.label[child] & 0xFF);
                if (next.isEmpty()) {
                    continue;
                }
                for (int t = trie.tokensStart[child]; t < trie.tokensStart[child + 1]; t++) {
                    allowed.set(trie.tokens[t]);
                }
                if (trie.firstChild[child] >= 0) {
                    pending.push(new Object[]{child, next});
                }
            }
        }
        return allowed;
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
        byte[] bytes = tokenizer.decode(token);
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
