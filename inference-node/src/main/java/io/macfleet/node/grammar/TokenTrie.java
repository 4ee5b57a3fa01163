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
        int size = tokenizer.size();
        byte[][] bytes = new byte[size][];
        Integer[] order = new Integer[size];
        int count = 0;
        for (int id = 0; id < size; id++) {
            bytes[id] = tokenizer.decode(id);
            if (bytes[id].length > 0) {
                order[count++] = id;
            }
        }
        Integer[] sorted = Arrays.copyOf(order, count);
        Arrays.sort(sorted, (a, b) -> Arrays.compareUnsigned(bytes[a], bytes[b]));
        return build(size, bytes, sorted);
    }

    /** Builds from tokens sorted by their bytes: each token shares the path of its common prefix with the previous. */
    static TokenTrie build(int vocabularySize, byte[][] bytes, Integer[] sorted) {
        int capacity = 1;
        for (Integer id : sorted) {
            capacity += bytes[id].length;
        }
        int[] firstChild = new int[capacity];
        int[] nextSibling = new int[capacity];
        int[] lastChild = new int[capacity];
        byte[] label = new byte[capacity];
        int[] endingCount = new int[capacity];
        int[] tokenNode = new int[sorted.length];
        Arrays.fill(firstChild, -1);
        Arrays.fill(nextSibling, -1);
        Arrays.fill(lastChild, -1);
        int nodes = 1;
        int[] path = new int[1];
        byte[] previous = new byte[0];
        for (int t = 0; t < sorted.length; t++) {
            byte[] current = bytes[sorted[t]];
            if (path.length < current.length + 1) {
                path = Arrays.copyOf(path, Math.max(current.length + 1, path.length * 2));
            }
            int common = Arrays.mismatch(previous, current);
            if (common < 0) {
                common = current.length;
            }
            common = Math.min(common, Math.min(previous.length, current.length));
            for (int depth = common; depth < current.length; depth++) {
                int parent = path[depth];
                int node = nodes++;
                label[node] = current[depth];
                if (lastChild[parent] < 0) {
                    firstChild[parent] = node;
                } else {
                    nextSibling[lastChild[parent]] = node;
                }
                lastChild[parent] = node;
                path[depth + 1] = node;
            }
            tokenNode[t] = path[current.length];
            endingCount[tokenNode[t]]++;
            previous = current;
        }
        int[] tokensStart = new int[nodes + 1];
        for (int node = 0; node < nodes; node++) {
            tokensStart[node + 1] = tokensStart[node] + endingCount[node];
        }
        int[] fill = Arrays.copyOf(tokensStart, nodes);
        int[] tokens = new int[sorted.length];
        for (int t = 0; t < sorted.length; t++) {
            tokens[fill[tokenNode[t]]++] = sorted[t];
        }
        return new TokenTrie(vocabularySize, Arrays.copyOf(firstChild, nodes), Arrays.copyOf(nextSibling, nodes),
                Arrays.copyOf(label, nodes), tokensStart, tokens);
    }

    public int nodes() {
        return firstChild.length;
    }
}
