package io.macfleet.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * The field names of one JSON object in an answer, in the order they were sent. Tests pin an answer's whole shape
 * with it, so that a renamed field, a reordered one or a field newly sent as null (instead of left out) fails.
 */
public final class JsonShape {

    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonShape() {
    }

    /** The names of the object at {@code pointer} (a JSON Pointer such as {@code /ranks/0}; empty: the whole document). */
    public static List<String> fieldNames(String json, String pointer) {
        JsonNode node;
        try {
            node = JSON.readTree(json).at(pointer);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + json, e);
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("no JSON object at '" + pointer + "' in " + json);
        }
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
