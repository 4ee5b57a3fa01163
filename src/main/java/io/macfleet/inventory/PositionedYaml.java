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

    /**
     * Caps checked before and while parsing, so that a big or hostile document is refused quickly instead of
     * stalling the service (SnakeYAML's time grows faster than the input). An inventory of 2,000 machines
     * written out one by one is about 0.3 MB and 20,000 nodes, well inside them.
     */
    public static final int MAXIMUM_DOCUMENT_BYTES = 2 * 1024 * 1024;
    public static final int MAXIMUM_NODES = 200_000;
    public static final int MAXIMUM_ALIASES = 50;
    public static final int MAXIMUM_NESTING = 40;
    /** Every message about a cap contains this, so that the API can answer 413 instead of 400. */
    public static final String LIMIT_EXCEEDED = "over macfleet's limit";

    private static final YAMLFactory YAML = YAMLFactory.builder().loaderOptions(loaderOptions()).build();

    private static org.yaml.snakeyaml.LoaderOptions loaderOptions() {
        org.yaml.snakeyaml.LoaderOptions options = new org.yaml.snakeyaml.LoaderOptions();
        options.setCodePointLimit(MAXIMUM_DOCUMENT_BYTES);
        options.setMaxAliasesForCollections(MAXIMUM_ALIASES);
        options.setNestingDepthLimit(MAXIMUM_NESTING);
        options.setAllowRecursiveKeys(false);
        return options;
    }

    /**
     * Decodes UTF-8 strictly: a byte sequence that is not UTF-8 is an error naming its byte offset (counted from
     * 0) and line, never silently replaced.
     */
    public static String decodeUtf8(byte[] bytes) throws SyntaxException {
        java.nio.charset.CharsetDecoder decoder = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        java.nio.ByteBuffer input = java.nio.ByteBuffer.wrap(bytes);
        java.nio.CharBuffer output = java.nio.CharBuffer.allocate(bytes.length);
        java.nio.charset.CoderResult result = decoder.decode(input, output, true);
        if (result.isError()) {
            int offset = input.position();
            int line = 1;
            for (int i = 0; i < offset; i++) {
                if (bytes[i] == '\n') {
                    line++;
                }
            }
            throw new SyntaxException(new Position(line, 1), "invalid UTF-8 at byte " + offset + " (0x"
                    + String.format("%02x", bytes[offset] & 0xff) + "); expected a UTF-8 text file");
        }
        decoder.flush(output);
        return output.flip().toString();
    }

    /** True when a message (of a syntax error or an {@link InventoryError}) is about one of the caps. */
    public static boolean isLimitMessage(String message) {
        return message != null && message.contains(LIMIT_EXCEEDED);
    }

    /** The size cap, checked without parsing: a message naming the limit, or empty when the text is within it. */
    public static java.util.Optional<String> sizeProblem(String text) {
        long bytes = utf8Length(text);
        if (bytes <= MAXIMUM_DOCUMENT_BYTES) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("the document is " + bytes + " bytes, " + LIMIT_EXCEEDED + " of " + MAXIMUM_DOCUMENT_BYTES
                + " bytes (" + MAXIMUM_DOCUMENT_BYTES / (1024 * 1024) + " MiB) for one YAML document; expected a smaller document (split an inventory into several files)");
    }

    private static long utf8Length(String text) {
        if (text.length() > MAXIMUM_DOCUMENT_BYTES) {
            return (long) text.length() + (long) text.codePoints().filter(c -> c > 0x7f).count();
        }
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return bytes;
    }
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
        java.util.Optional<String> tooLarge = sizeProblem(text);
        if (tooLarge.isPresent()) {
            throw new SyntaxException(new Position(1, 1), tooLarge.get());
        }
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
                if (cause instanceof org.yaml.snakeyaml.error.YAMLException limit && !(cause instanceof org.yaml.snakeyaml.error.MarkedYAMLException)
                        && limit.getMessage() != null && limit.getMessage().contains("exceeds")) {
                    // SnakeYAML's own caps (LoaderOptions), as a second line behind the checks above.
                    throw new SyntaxException(position, "a YAML document " + LIMIT_EXCEEDED + ": " + limit.getMessage());
                }
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
        if (positions.size() > MAXIMUM_NODES) {
            throw new SyntaxException(position(parser.currentTokenLocation()), "more than " + MAXIMUM_NODES
                    + " values, " + LIMIT_EXCEEDED + " of " + MAXIMUM_NODES + " values (mappings, sequences and scalars) in one YAML document; expected a smaller document");
        }
        JsonToken token = parser.currentToken();
        if ((token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) && depth(pointer) >= MAXIMUM_NESTING) {
            throw new SyntaxException(position(parser.currentTokenLocation()), "mappings and sequences nested more than "
                    + MAXIMUM_NESTING + " deep, " + LIMIT_EXCEEDED + " of " + MAXIMUM_NESTING + " levels; expected a flatter document");
        }
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

    private static int depth(String pointer) {
        int depth = 0;
        for (int i = 0; i < pointer.length(); i++) {
            if (pointer.charAt(i) == '/') {
                depth++;
            }
        }
        return depth;
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
