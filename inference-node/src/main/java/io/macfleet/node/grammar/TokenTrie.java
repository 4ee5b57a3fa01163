package io.macfleet.node.grammar;

import io.macfleet.node.tokenizer.Tokenizer;

import java.util.Arrays;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Every token's bytes (as the tokenizer decodes them in generated text: byte-level BPE and SentencePiece alike)
 * in a trie, built once per tokenizer. The grammar walks it with its automaton, so a byte prefix shared by
 * thousands of tokens is checked once. Tokens that decode to nothing (control tokens) are not in it.
 */
public final class TokenTrie {
    private static final Map<Tokenizer, TokenTrie> CACHE = new WeakHashMap<>();

    final int vocabularySize;
    /** Per node: first child, next sibling, the byte on the edge into it, and the tokens ending there. */
    final int[] firstChild;
    final int[] nextSibling;
    final byte[] label;
    final int[] tokensStart;
    final int[] tokens;

    private TokenTrie(int vocabularySize, int[] firstChild, int[] nextSibling, byte[] label, int[] tokensStart, int[] tokens) {
        this.vocabularySize = vocabularySize;
        this.firstChild = firstChild;
        this.nextSibling = nextSibling;
        this.label = label;
        this.tokensStart = tokensStart;
        this.tokens = tokens;
    }

    public static TokenTrie of(Tokenizer tokenizer) {
        synchronized (CACHE) {
            return CACHE.computeIfAbsent(tokenizer, TokenTrie::build);
        }
    }

    static TokenTrie build(Tokenizer tokenizer) {
        byte[][] bytes = new byte[tokenizer.size()][];
        for (int id = 0; id < bytes.length; id++) {
            bytes[id] = tokenizer.decode(id);
        }
        return build(bytes);
    }

    /**
     * Builds from every token's bytes (empty ones left out). Children are found through one open-addressing table
     * keyed by (parent, byte), so building is linear in the vocabulary's bytes, with no sorting.
     */
    static TokenTrie build(byte[][] bytes) {
        int capacity = 1;
        for (byte[] token : bytes) {
            capacity += token.length;
        }
        int[] firstChild = new int[capacity];
        int[] nextSibling = new int[capacity];
        byte[] label = new byte[capacity];
        int[] tokenNode = new int[bytes.length];
        Arrays.fill(firstChild, -1);
        Arrays.fill(nextSibling, -1);
        int slots = Integer.highestOneBit(Math.max(16, capacity * 2)) << 1;
        long[] keys = new long[slots];
        int[] values = new int[slots];
        Arrays.fill(keys, -1);
        int nodes = 1;
        for (int id = 0; id < bytes.length; id++) {
            int node = 0;
            for (byte b : bytes[id]) {
                long key = ((long) node << 8) | (b & 0xFF);
                int slot = (int) (mix(key) & (slots - 1));
                while (keys[slot] != -1 && keys[slot] != key) {
                    slot = (slot + 1) & (slots - 1);
                }
                if (keys[slot] == key) {
                    node = values[slot];
                    continue;
                }
                int child = nodes++;
                keys[slot] = key;
                values[slot] = child;
                label[child] = b;
                nextSibling[child] = firstChild[node];
                firstChild[node] = child;
                node = child;
            }
            tokenNode[id] = bytes[id].length == 0 ? -1 : node;
        }
        int[] tokensStart = new int[nodes + 1];
        for (int node : tokenNode) {
            if (node >= 0) {
                tokensStart[node + 1]++;
            }
        }
        for (int node = 0; node < nodes; node++) {
            tokensStart[node + 1] += tokensStart[node];
        }
        int[] fill = Arrays.copyOf(tokensStart, nodes);
        int[] tokens = new int[tokensStart[nodes]];
        for (int id = 0; id < bytes.length; id++) {
            if (tokenNode[id] >= 0) {
                tokens[fill[tokenNode[id]]++] = id;
            }
        }
        return new TokenTrie(bytes.length, Arrays.copyOf(firstChild, nodes), Arrays.copyOf(nextSibling, nodes),
                Arrays.copyOf(label, nodes), tokensStart, tokens);
    }

    private static long mix(long key) {
        key *= 0x9E3779B97F4A7C15L;
        return key ^ (key >>> 29);
    }

    public int nodes() {
        return firstChild.length;
    }
}
