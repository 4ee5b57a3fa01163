package io.macfleet.node.grammar;

import io.macfleet.node.json.Json;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Compiles the JSON Schema subset of OpenAI's structured outputs into a {@link Node} grammar: type (object, array,
 * string, number, integer, boolean, null, or a list of them), properties, required, additionalProperties (false;
 * true or absent generate only the declared properties), items, enum, const, anyOf, $defs/definitions with
 * "#/$defs/NAME" references, nested. Any other keyword is refused by name, never ignored.
 */
public final class SchemaCompiler {
    /** Keywords that only annotate: they never change which values are valid. */
    private static final Set<String> ANNOTATIONS = Set.of("description", "title", "$schema", "$id", "$comment",
            "examples", "default", "deprecated", "readOnly", "writeOnly");
    private static final Set<String> SUPPORTED = Set.of("type", "properties", "required", "additionalProperties",
            "items", "enum", "const", "anyOf", "$defs", "definitions", "$ref");

    private final Map<String, Object> definitions = new HashMap<>();
    private final Map<String, Node> compiled = new HashMap<>();
    private final List<Node.Reference> references = new ArrayList<>();

    private SchemaCompiler() {
    }

    /** The grammar of values valid against {@code schema} (a parsed JSON object). */
    public static Node compile(Object schema) {
        SchemaCompiler compiler = new SchemaCompiler();
        Node root = compiler.node(schema, "#");
        for (Node.Reference reference : compiler.references) {
            reference.resolved = compiler.definition(reference.target);
        }
        return root;
    }

    private Node definition(String target) {
        Node node = compiled.get(target);
        if (node == null) {
            throw new SchemaException("$ref", target, "names no definition in $defs");
        }
        return node;
    }

    @SuppressWarnings("unchecked")
    private Node node(Object value, String path) {
        if (Boolean.TRUE.equals(value)) {
            return Node.AnyValue.INSTANCE;
        }
        if (!(value instanceof Map<?, ?> raw)) {
            throw new SchemaException(null, path, "must be a JSON object, got " + Json.write(value));
        }
        Map<String, Object> schema = (Map<String, Object>) raw;
        for (String keyword : schema.keySet()) {
            if (!SUPPORTED.contains(keyword) && !ANNOTATIONS.contains(keyword)) {
                throw new SchemaException(keyword, path, "is not supported (supported: " + String.join(", ",
                        List.of("type", "properties", "required", "additionalProperties", "items", "enum", "const",
                                "anyOf", "$defs", "$ref")) + ")");
            }
        }
        for (String key : List.of("$defs", "definitions")) {
            if (schema.get(key) instanceof Map<?, ?> defs) {
                for (Map.Entry<?, ?> entry : defs.entrySet()) {
                    String target = "#/" + key + "/" + entry.getKey();
                    compiled.put(target, node(entry.getValue(), path + "/" + key + "/" + entry.getKey()));
                }
            } else if (schema.containsKey(key)) {
                throw new SchemaException(key, path, "must be an object of schemas");
            }
        }
        if (schema.containsKey("$ref")) {
            if (!(schema.get("$ref") instanceof String target) || !(target.startsWith("#/$defs/")
                    || target.startsWith("#/definitions/") || target.equals("#"))) {
                throw new SchemaException("$ref", path, "must be \"#\" or \"#/$defs/NAME\", got " + Json.write(schema.get("$ref")));
            }
            if (target.equals("#")) {
                throw new SchemaException("$ref", path, "to the root schema is not supported; put it in $defs");
            }
            Node.Reference reference = new Node.Reference(target);
            references.add(reference);
            return reference;
        }
        if (schema.containsKey("const")) {
            return new Node.Literal(Json.write(schema.get("const")));
        }
        if (schema.containsKey("enum")) {
            if (!(schema.get("enum") instanceof List<?> members) || members.isEmpty()) {
                throw new SchemaException("enum", path, "must be a non-empty array");
            }
            List<Node> literals = new ArrayList<>();
            for (Object member : members) {
                literals.add(new Node.Literal(Json.write(member)));
            }
            return Node.anyOf(literals);
        }
        if (schema.containsKey("anyOf")) {
            if (!(schema.get("anyOf") instanceof List<?> alternatives) || alternatives.isEmpty()) {
                throw new SchemaException("anyOf", path, "must be a non-empty array of schemas");
            }
            List<Node> nodes = new ArrayList<>();
            for (int i = 0; i < alternatives.size(); i++) {
                nodes.add(node(alternatives.get(i), path + "/anyOf/" + i));
            }
            return Node.anyOf(nodes);
        }
        Object type = schema.get("type");
        if (type == null) {
            if (schema.containsKey("properties")) {
                type = "object";
            } else if (schema.containsKey("items")) {
                type = "array";
            } else {
                return Node.AnyValue.INSTANCE;
            }
        }
        if (type instanceof List<?> types) {
            List<Node> nodes = new ArrayList<>();
            for (Object each : types) {
                nodes.add(typed(each, schema, path));
            }
            if (nodes.isEmpty()) {
                throw new SchemaException("type", path, "must name at least one type");
            }
            return Node.anyOf(nodes);
        }
        return typed(type, schema, path);
    }

    private Node typed(Object type, Map<String, Object> schema, String path) {
        if (!(type instanceof String name)) {
            throw new SchemaException("type", path, "must be a string or an array of strings");
        }
        return switch (name) {
            case "object" -> object(schema, path);
            case "array" -> new Node.ArrayNode(schema.containsKey("items") ? node(schema.get("items"), path + "/items")
                    : Node.AnyValue.INSTANCE);
            case "string" -> Node.StringNode.INSTANCE;
            case "number" -> Node.NumberNode.NUMBER;
            case "integer" -> Node.NumberNode.INTEGER;
            case "boolean" -> Node.anyOf(List.of(new Node.Literal("true"), new Node.Literal("false")));
            case "null" -> new Node.Literal("null");
            default -> throw new SchemaException("type", path, "'" + name
                    + "' is not a JSON Schema type (object, array, string, number, integer, boolean, null)");
        };
    }

    private Node object(Map<String, Object> schema, String path) {
        Object additional = schema.get("additionalProperties");
        if (additional != null && !(additional instanceof Boolean)
                && !(additional instanceof Map<?, ?> map && map.isEmpty())) {
            throw new SchemaException("additionalProperties", path, "must be false (or true); a schema for extra "
                    + "properties is not supported");
        }
        Object properties = schema.get("properties");
        if (properties != null && !(properties instanceof Map<?, ?>)) {
            throw new SchemaException("properties", path, "must be an object of schemas");
        }
        List<String> required = new ArrayList<>();
        if (schema.get("required") instanceof List<?> names) {
            for (Object each : names) {
                if (!(each instanceof String s)) {
                    throw new SchemaException("required", path, "must be an array of property names");
                }
                required.add(s);
            }
        } else if (schema.containsKey("required")) {
            throw new SchemaException("required", path, "must be an array of property names");
        }
        Map<?, ?> declared = properties == null ? Map.of() : (Map<?, ?>) properties;
        for (String name : required) {
            if (!declared.containsKey(name)) {
                throw new SchemaException("required", path, "names '" + name + "', which is not in properties");
            }
        }
        if (declared.isEmpty() && !Boolean.FALSE.equals(additional)) {
            return Node.anyObject();
        }
        List<Node.Property> list = new ArrayList<>();
        for (Map.Entry<?, ?> entry : declared.entrySet()) {
            String name = (String) entry.getKey();
            list.add(new Node.Property(name, node(entry.getValue(), path + "/properties/" + name),
                    required.contains(name)));
        }
        return new Node.ObjectNode(List.copyOf(list), false);
    }
}
