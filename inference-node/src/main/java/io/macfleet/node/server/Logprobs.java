package io.macfleet.node.server;

import io.macfleet.node.engine.GenerationOptions.TokenLogprob;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Log probabilities in OpenAI's two shapes: chat's "content" list and the legacy completions' parallel arrays. */
final class Logprobs {
    private Logprobs() {
    }

    static Map<String, Object> chat(List<TokenLogprob> tokens) {
        List<Object> content = new ArrayList<>();
        for (TokenLogprob token : tokens) {
            Map<String, Object> entry = entry(token);
            List<Object> top = new ArrayList<>();
            for (TokenLogprob alternative : token.top()) {
                top.add(entry(alternative));
            }
            entry.put("top_logprobs", top);
            content.add(entry);
        }
        Map<String, Object> logprobs = new LinkedHashMap<>();
        logprobs.put("content", content);
        logprobs.put("refusal", null);
        return logprobs;
    }

    static Map<String, Object> completion(List<TokenLogprob> tokens) {
        List<Object> texts = new ArrayList<>();
        List<Object> values = new ArrayList<>();
        List<Object> tops = new ArrayList<>();
        List<Object> offsets = new ArrayList<>();
        int offset = 0;
        for (TokenLogprob token : tokens) {
            String text = text(token.bytes());
            texts.add(text);
            values.add(token.logprob());
            Map<String, Object> top = new LinkedHashMap<>();
            for (TokenLogprob alternative : token.top()) {
                top.putIfAbsent(text(alternative.bytes()), alternative.logprob());
            }
            tops.add(top);
            offsets.add(offset);
            offset += text.length();
        }
        Map<String, Object> logprobs = new LinkedHashMap<>();
        logprobs.put("tokens", texts);
        logprobs.put("token_logprobs", values);
        logprobs.put("top_logprobs", tops);
        logprobs.put("text_offset", offsets);
        return logprobs;
    }

    private static Map<String, Object> entry(TokenLogprob token) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("token", text(token.bytes()));
        entry.put("logprob", token.logprob());
        List<Object> bytes = new ArrayList<>();
        for (byte b : token.bytes()) {
            bytes.add(b & 0xFF);
        }
        entry.put("bytes", bytes);
        return entry;
    }

    /** A token's text; a token holding part of a UTF-8 character shows as replacement characters (its bytes are exact). */
    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
