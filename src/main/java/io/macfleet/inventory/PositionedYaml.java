package io.macfleet.inventory;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML document read into a Jackson tree while remembering where each value was written, keyed by JSON
 * pointer. Schema validators report JSON pointers; this is how their errors get a line and a column.
 * For a mapping member the position is the key's (where a person looks), for a sequence item its start.
 */
public final class PositionedYaml {

    private static final YAMLFactory YAML = YAMLFactory.builder().build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public record Position(int line, int column) {
    }

    /** A YAML syntax problem (or a duplicate key), positioned. */
    public static final class SyntaxException extends Exception {
        final Position position;

        public Position position() {
            return position;
        }

        SyntaxException(Position position, String message) {
            super(message);
            this.position = position;
        }
    }

    private final JsonNode root;
    private final Map<String, Position> positions;

    private PositionedYaml(JsonNode root, Map<String, Position> positions) {
        this.root = root;
        this.positions = positions;
    }

    public JsonNode root() {
        return root;
    }

    /** The position of the pointer, or of its nearest ancestor that has one. */
    public Position positionOf(String pointer) {
        String current = pointer;
        while (true) {
            Position position = positions.get(current);
            if (position != null) {
                return position;
            }
            if (current.isEmpty()) {
                return new Position(1, 1);
            }
            current = current.substring(0, current.lastIndexOf('/'));
        }
    }

    public static PositionedYaml parse(String text) throws SyntaxException {
        return parse(text, "valid YAML (a mapping of defaults, groups, clusters, machines)");
    }

    /** As {@link #parse(String)}; {@code expected} says what a syntax error message expects ("valid YAML (a playbook)"). */
    public static PositionedYaml parse(String text, String expected) throws SyntaxException {
        Map<String, Position> positions = new HashMap<>();
        try (JsonParser parser = YAML.createParser(text)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return new PositionedYaml(NullNode.getInstance(), positions);
            }
            positions.put("", position(parser.currentTokenLocation()));
            JsonNode root = readValue(parser, "", positions);
            if (parser.nextToken() != null) {
                throw new SyntaxException(position(parser.currentTokenLocation()),
                        "a second YAML document in the same file; expected one document per file");
            }
            return new PositionedYaml(root, positions);
        } catch (JsonProcessingException e) {
            JsonLocation location = e.getLocation();
            Position position = location == null ? new Position(1, 1) : position(location);
            String message = "unreadable YAML";
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof org.yaml.snakeyaml.error.MarkedYAMLException marked) {
                    // The problem and its mark only: the full message quotes the surrounding text, which could be a secret.
                    message = (marked.getContext() == null ? "" : marked.getContext() + ": ") + marked.getProblem();
                    if (marked.getProblemMark() != null) {
                        position = new Position(marked.getProblemMark().getLine() + 1, marked.getProblemMark().getColumn() + 1);
                    }
                    break;
                }
            }
            throw new SyntaxException(position, "malformed YAML: " + message.strip() + "; expected " + expected);
        } catch (IOException e) {
            throw new SyntaxException(new Position(1, 1), "cannot read YAML: " + e.getMessage());
        }
    }

    private static JsonNode readValue(JsonParser parser, String pointer, Map<String, Position> positions)
            throws IOException, SyntaxException {
        JsonToken token = parser.currentToken();
        switch (token) {
            case START_OBJECT -> {
                ObjectNode object = NODES.objectNode();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String key = parser.currentName();
                    String childPointer = pointer + "/" + escape(key);
                    Position keyPosition = position(parser.currentTokenLocation());
                    if (object.has(key)) {
                        Position first = positions.get(childPointer);
                        throw new SyntaxException(keyPosition, "duplicate key '" + key + "' (first at line " + first.line()
                                + "); expected each key once per mapping");
                    }
                    positions.put(childPointer, keyPosition);
                    parser.nextToken();
                    object.set(key, readValue(parser, childPointer, positions));
                }
                return object;
            }
            case START_ARRAY -> {
                ArrayNode array = NODES.arrayNode();
                int index = 0;
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    String childPointer = pointer + "/" + index++;
                    positions.put(childPointer, position(parser.currentTokenLocation()));
                    array.add(readValue(parser, childPointer, positions));
                }
                return array;
            }
            case VALUE_STRING -> {
                return NODES.textNode(parser.getText());
            }
            case VALUE_NUMBER_INT -> {
                return integerNode(parser);
            }
            case VALUE_NUMBER_FLOAT -> {
                return NODES.numberNode(parser.getDecimalValue());
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return NODES.booleanNode(token == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return NullNode.getInstance();
            }
            default -> throw new SyntaxException(position(parser.currentTokenLocation()), "unexpected YAML token " + token);
        }
    }

    private static JsonNode integerNode(JsonParser parser) throws IOException {
        return switch (parser.getNumberType()) {
            case INT -> NODES.numberNode(parser.getIntValue());
            case LONG -> NODES.numberNode(parser.getLongValue());
            default -> NODES.numberNode(parser.getBigIntegerValue());
        };
    }

    private static Position position(JsonLocation location) {
        return new Position(Math.max(1, location.getLineNr()), Math.max(1, location.getColumnNr()));
    }

    public static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }

    /** A JSON pointer from path elements (names and indexes). */
    public static String pointer(List<Object> elements) {
        StringBuilder builder = new StringBuilder();
        for (Object element : elements) {
            builder.append('/').append(element instanceof String name ? escape(name) : String.valueOf(element));
        }
        return builder.toString();
    }
}
