package io.macfleet.node.tokenizer;

import io.macfleet.node.gguf.GgufFile;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A tokenizer built from GGUF metadata ({@code tokenizer.ggml.*}): GPT-2 style byte-level BPE ("gpt2") or
 * SentencePiece style ("llama"). Control tokens (token type 3) and user-defined tokens (type 4) in the text are
 * recognised as single tokens when {@code parseSpecial} is set, which is what chat templates rely on.
 */
public abstract sealed class Tokenizer permits BytePairTokenizer, SentencePieceTokenizer {
    public static final int TYPE_NORMAL = 1, TYPE_UNKNOWN = 2, TYPE_CONTROL = 3, TYPE_USER_DEFINED = 4,
            TYPE_UNUSED = 5, TYPE_BYTE = 6;

    protected final String[] tokens;
    protected final int[] types;
    protected final Map<String, Integer> ids = new HashMap<>();
    private final List<String> specialTexts = new ArrayList<>();
    private final int bos;
    private final int eos;
    private final boolean addBos;

    protected Tokenizer(String[] tokens, int[] types, int bos, int eos, boolean addBos) {
        this.tokens = tokens;
        this.types = types;
        this.bos = bos;
        this.eos = eos;
        this.addBos = addBos;
        for (int i = 0; i < tokens.length; i++) {
            ids.putIfAbsent(tokens[i], i);
            if ((types[i] == TYPE_CONTROL || types[i] == TYPE_USER_DEFINED) && !tokens[i].isEmpty()) {
                specialTexts.add(tokens[i]);
            }
        }
        specialTexts.sort(Comparator.comparingInt(String::length).reversed());
    }

    public static Tokenizer from(GgufFile file) {
        String model = file.string("tokenizer.ggml.model");
        List<Object> tokenList = file.array("tokenizer.ggml.tokens");
        String[] tokens = new String[tokenList.size()];
        for (int i = 0; i < tokens.length; i++) {
            if (!(tokenList.get(i) instanceof String s)) {
                throw file.error("metadata 'tokenizer.ggml.tokens' element " + i + " is not a string");
            }
            tokens[i] = s;
        }
        int[] types = new int[tokens.length];
        java.util.Arrays.fill(types, TYPE_NORMAL);
        if (file.metadata().containsKey("tokenizer.ggml.token_type")) {
            List<Object> typeList = file.array("tokenizer.ggml.token_type");
            if (typeList.size() != tokens.length) {
                throw file.error("metadata 'tokenizer.ggml.token_type' has " + typeList.size() + " entries but "
                        + "'tokenizer.ggml.tokens' has " + tokens.length);
            }
            for (int i = 0; i < types.length; i++) {
                types[i] = ((Number) typeList.get(i)).intValue();
            }
        }
        int bos = tokenId(file, "tokenizer.ggml.bos_token_id", tokens.length);
        int eos = tokenId(file, "tokenizer.ggml.eos_token_id", tokens.length);
        return switch (model) {
            case "gpt2" -> {
                List<Object> mergeList = file.array("tokenizer.ggml.merges");
                List<String> merges = new ArrayList<>(mergeList.size());
                for (Object merge : mergeList) {
                    merges.add((String) merge);
                }
                yield new BytePairTokenizer(tokens, types, merges, bos, eos,
                        file.bool("tokenizer.ggml.add_bos_token", false), file.string("tokenizer.ggml.pre", "default"));
            }
            case "llama" -> {
                List<Object> scoreList = file.array("tokenizer.ggml.scores");
                if (scoreList.size() != tokens.length) {
                    throw file.error("metadata 'tokenizer.ggml.scores' has " + scoreList.size() + " entries but "
                            + "'tokenizer.ggml.tokens' has " + tokens.length);
                }
                float[] scores = new float[tokens.length];
                for (int i = 0; i < scores.length; i++) {
                    scores[i] = ((Number) scoreList.get(i)).floatValue();
                }
                yield new SentencePieceTokenizer(tokens, types, scores, bos, eos,
                        file.bool("tokenizer.ggml.add_bos_token", true),
                        (int) file.integer("tokenizer.ggml.unknown_token_id", 0));
            }
            default -> throw file.error("unsupported tokenizer model '" + model
                    + "' in metadata 'tokenizer.ggml.model' (supported: gpt2, llama)");
        };
    }

    private static int tokenId(GgufFile file, String key, int size) {
        if (!file.metadata().containsKey(key)) {
            return -1;
        }
        long id = file.integer(key);
        if (id < 0 || id >= size) {
            throw file.error("metadata '" + key + "' = " + id + " is outside the vocabulary of " + size + " tokens");
        }
        return (int) id;
    }

    public int size() {
        return tokens.length;
    }

    public int bos() {
        return bos;
    }

    public int eos() {
        return eos;
    }

    public boolean addBos() {
        return addBos;
    }

    public String token(int id) {
        return tokens[id];
    }

    public OptionalInt id(String token) {
        Integer id = ids.get(token);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    public boolean isControl(int id) {
        return types[id] == TYPE_CONTROL;
    }

    /** Encodes text; control and user-defined tokens written in the text count as themselves if parseSpecial. */
    public List<Integer> encode(String text, boolean parseSpecial) {
        List<Integer> out = new ArrayList<>();
        if (!parseSpecial || specialTexts.isEmpty()) {
            encodeOrdinary(text, out);
            return out;
        }
        int start = 0;
        int segmentStart = 0;
        while (start < text.length()) {
            String match = null;
            for (String special : specialTexts) {
                if (text.startsWith(special, start)) {
                    match = special;
                    break;
                }
            }
            if (match == null) {
                start++;
                continue;
            }
            if (start > segmentStart) {
                encodeOrdinary(text.substring(segmentStart, start), out);
            }
            out.add(ids.get(match));
            start += match.length();
            segmentStart = start;
        }
        if (segmentStart < text.length()) {
            encodeOrdinary(text.substring(segmentStart), out);
        }
        return out;
    }

    protected abstract void encodeOrdinary(String text, List<Integer> out);

    /** The bytes a token stands for in generated text; control tokens produce nothing. */
    public abstract byte[] decode(int id);

    public String decode(List<Integer> ids) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int id : ids) {
            bytes.writeBytes(decode(id));
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
