package io.macfleet.node.generator;

import io.macfleet.node.tokenizer.BytePairTokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deterministic GPT-2 style byte-level BPE vocabulary: the 256 byte tokens, merges learned from a small built-in
 * English text (most frequent pair first, as BPE training does), then, once the text has nothing left to teach,
 * seeded merges of existing tokens up to the size asked for; Llama 3 special tokens at the end.
 */
public final class VocabularyBuilder {
    public static final List<String> SPECIAL_TOKENS = List.of("<|begin_of_text|>", "<|end_of_text|>",
            "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>");

    static final String CORPUS = """
            The quick brown fox jumps over the lazy dog. A cluster of machines works together to run one large \
            language model. Each machine holds a part of the weights and the machines talk to each other over fast \
            links. When a user asks a question, the coordinator turns the text into tokens, runs the model layer by \
            layer, and streams the answer back one token at a time. Hello! How are you today? I am fine, thank you. \
            What is the weather like in the city? It is sunny and warm, with a light wind from the west. \
            The model reads the prompt, thinks about the context, and writes a helpful reply. Numbers such as 1, 2, \
            3, 10, 42, 100 and 2026 appear in text too. Good morning, good evening, good night. Please write a short \
            story about a robot who learns to paint. Once upon a time there was a small robot that lived in a quiet \
            workshop. Every day it watched the painter mix colors and move the brush across the canvas. One day the \
            robot picked up a brush and tried for itself. The first picture was a mess, but the robot kept trying, \
            and in the end it painted the sea, the sky and the mountains. The system is ready. The answer is yes. \
            Thank you for your help. You are welcome. Let me know if there is anything else I can do for you.
            """;

    /** The vocabulary: token strings in id order, their types, and merges in rank order. */
    public record Vocabulary(List<String> tokens, List<Integer> types, List<String> merges) {
    }

    private VocabularyBuilder() {
    }

    public static Vocabulary build(int size, long seed) {
        int normal = size - SPECIAL_TOKENS.size();
        if (normal < 256) {
            throw new IllegalArgumentException("vocabulary size " + size + " leaves no room for the 256 byte tokens");
        }
        List<String> tokens = new ArrayList<>();
        Set<String> known = new HashSet<>();
        for (int b = 0; b < 256; b++) {
            String token = BytePairTokenizer.encodeBytes(new byte[]{(byte) b});
            tokens.add(token);
            known.add(token);
        }
        List<String> merges = new ArrayList<>();
        learn(tokens, known, merges, normal);
        SplittableRandom random = new SplittableRandom(seed);
        int learned = tokens.size();
        while (tokens.size() < normal) {
            // Prefer recent (longer, word-like) tokens on the left and short ones on the right, like real merges.
            String left = tokens.get(tokens.size() > 256 && random.nextBoolean()
                    ? random.nextInt(256, tokens.size()) : random.nextInt(tokens.size()));
            String right = tokens.get(random.nextInt(Math.min(tokens.size(), learned)));
            String merged = left + right;
            if (merged.length() > 16 || !known.add(merged)) {
                continue;
            }
            merges.add(left + " " + right);
            tokens.add(merged);
        }
        List<Integer> types = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            types.add(1);
        }
        for (String special : SPECIAL_TOKENS) {
            tokens.add(special);
            types.add(3);
        }
        return new Vocabulary(tokens, types, merges);
    }

    private static void learn(List<String> tokens, Set<String> known, List<String> merges, int limit) {
        Map<List<String>, Integer> words = new HashMap<>();
        Matcher matcher = Pattern.compile("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
                + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+").matcher(CORPUS);
        while (matcher.find()) {
            String piece = BytePairTokenizer.encodeBytes(matcher.group().getBytes(StandardCharsets.UTF_8));
            List<String> symbols = new ArrayList<>();
            for (int i = 0; i < piece.length(); i++) {
                symbols.add(String.valueOf(piece.charAt(i)));
            }
            words.merge(symbols, 1, Integer::sum);
        }
        List<List<String>> wordList = new ArrayList<>(words.keySet());
        List<Integer> counts = new ArrayList<>();
        for (List<String> word : wordList) {
            counts.add(words.get(word));
        }
        while (tokens.size() < limit) {
            Map<String, Integer> pairs = new HashMap<>();
            for (int w = 0; w < wordList.size(); w++) {
                List<String> word = wordList.get(w);
                for (int i = 0; i + 1 < word.size(); i++) {
                    pairs.merge(word.get(i) + " " + word.get(i + 1), counts.get(w), Integer::sum);
                }
            }
            String best = null;
            int bestCount = 1;
            for (Map.Entry<String, Integer> pair : pairs.entrySet()) {
                if (pair.getValue() > bestCount || (pair.getValue() == bestCount && best != null
                        && pair.getKey().compareTo(best) < 0)) {
                    best = pair.getKey();
                    bestCount = pair.getValue();
                }
            }
            if (best == null) {
                return;
            }
            int space = best.indexOf(' ');
            String left = best.substring(0, space);
            String right = best.substring(space + 1);
            String merged = left + right;
            merges.add(best);
            if (known.add(merged)) {
                tokens.add(merged);
            }
            for (List<String> word : wordList) {
                for (int i = 0; i + 1 < word.size(); i++) {
                    if (word.get(i).equals(left) && word.get(i + 1).equals(right)) {
                        word.set(i, merged);
                        word.remove(i + 1);
                    }
                }
            }
        }
    }
}
