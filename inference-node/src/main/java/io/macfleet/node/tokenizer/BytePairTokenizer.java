package io.macfleet.node.tokenizer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GPT-2 style byte-level BPE: text is split by the pre-tokenizer regex named in {@code tokenizer.ggml.pre}, each
 * piece's UTF-8 bytes are mapped to printable characters (the GPT-2 byte-to-unicode table), then merged by rank.
 */
public final class BytePairTokenizer extends Tokenizer {
    static final String GPT2_SPLIT = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    static final String LLAMA3_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static final String QWEN2_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[512];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int extra = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + extra++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private final Map<String, Integer> ranks = new HashMap<>();
    private final Pattern split;

    BytePairTokenizer(String[] tokens, int[] types, List<String> merges, int bos, int eos, boolean addBos, String pre) {
        super(tokens, types, bos, eos, addBos);
        for (int i = 0; i < merges.size(); i++) {
            ranks.putIfAbsent(merges.get(i), i);
        }
        split = Pattern.compile(switch (pre) {
            case "llama3", "llama-bpe", "smaug-bpe", "falcon3" -> LLAMA3_SPLIT;
            case "qwen2", "deepseek-r1-qwen" -> QWEN2_SPLIT;
            default -> GPT2_SPLIT;
        });
    }

    /** The GPT-2 printable form of raw bytes, as stored in the vocabulary. */
    public static String encodeBytes(byte[] bytes) {
        StringBuilder text = new StringBuilder(bytes.length);
        for (byte b : bytes) {
            text.append(BYTE_TO_CHAR[b & 0xFF]);
        }
        return text.toString();
    }

    @Override
    protected void encodeOrdinary(String text, List<Integer> out) {
        Matcher matcher = split.matcher(text);
        while (matcher.find()) {
            String piece = encodeBytes(matcher.group().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            Integer whole = ids.get(piece);
            if (whole != null) {
                out.add(whole);
                continue;
            }
            List<String> symbols = new ArrayList<>(piece.length());
            for (int i = 0; i < piece.length(); i++) {
                symbols.add(String.valueOf(piece.charAt(i)));
            }
            while (symbols.size() > 1) {
                int best = -1;
                int bestRank = Integer.MAX_VALUE;
                for (int i = 0; i + 1 < symbols.size(); i++) {
                    Integer rank = ranks.get(symbols.get(i) + " " + symbols.get(i + 1));
                    if (rank != null && rank < bestRank) {
                        bestRank = rank;
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
                } else {
                    // A symbol without a token (vocabulary lacks a byte): fall back to its single bytes we do have.
                    for (int i = 0; i < symbol.length(); i++) {
                        Integer single = ids.get(String.valueOf(symbol.charAt(i)));
                        if (single != null) {
                            out.add(single);
                        }
                    }
                }
            }
        }
    }

    @Override
    public byte[] decode(int id) {
        if (types[id] == TYPE_CONTROL) {
            return new byte[0];
        }
        String token = tokens[id];
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(token.length());
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b >= 0) {
                bytes.write(b);
            } else {
                bytes.writeBytes(String.valueOf(c).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return bytes.toByteArray();
    }
}
