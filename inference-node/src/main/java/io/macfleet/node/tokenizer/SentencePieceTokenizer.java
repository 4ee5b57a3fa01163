package io.macfleet.node.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * SentencePiece style tokenizer as llama.cpp runs it for {@code tokenizer.ggml.model = "llama"}: spaces become
 * U+2581, a space is prefixed, adjacent pieces are merged greedily by the highest score of the merged piece, and
 * characters without a piece fall back to {@code <0xXX>} byte tokens.
 */
public final class SentencePieceTokenizer extends Tokenizer {
    private static final String SPACE = "\u2581";
    private final float[] scores;
    private final int unknown;
    private final int[] byteTokens = new int[256];

    SentencePieceTokenizer(String[] tokens, int[] types, float[] scores, int bos, int eos, boolean addBos, int unknown) {
        super(tokens, types, bos, eos, addBos);
        this.scores = scores;
        this.unknown = unknown;
        for (int b = 0; b < 256; b++) {
            Integer id = ids.get(String.format("<0x%02X>", b));
            byteTokens[b] = id == null ? -1 : id;
        }
    }

    @Override
    protected void encodeOrdinary(String text, List<Integer> out) {
        if (text.isEmpty()) {
            return;
        }
        String normalized = SPACE + text.replace(" ", SPACE);
        List<String> symbols = new ArrayList<>();
        normalized.codePoints().forEach(cp -> symbols.add(new String(Character.toChars(cp))));
        while (symbols.size() > 1) {
            int best = -1;
            float bestScore = Float.NEGATIVE_INFINITY;
            for (int i = 0; i + 1 < symbols.size(); i++) {
                Integer id = ids.get(symbols.get(i) + symbols.get(i + 1));
                if (id != null && scores[id] > bestScore) {
                    bestScore = scores[id];
                    best = i;
                }
            }
            if (best < 0) {
                break;
            }
            symbols.set(best, symbols.get(best) + symbols.remove(best + 1));
        }
        for (String symbol : symbols) {
            Integer id = ids.get(symbol);
            if (id != null) {
                out.add(id);
                continue;
            }
            for (byte b : symbol.getBytes(StandardCharsets.UTF_8)) {
                int byteToken = byteTokens[b & 0xFF];
                out.add(byteToken >= 0 ? byteToken : unknown);
            }
        }
    }

    @Override
    public byte[] decode(int id) {
        if (types[id] == TYPE_CONTROL) {
            return new byte[0];
        }
        String token = tokens[id];
        if (types[id] == TYPE_BYTE && token.length() == 6 && token.startsWith("<0x")) {
            return new byte[]{(byte) Integer.parseInt(token.substring(3, 5), 16)};
        }
        return token.replace(SPACE, " ").getBytes(StandardCharsets.UTF_8);
    }
}
