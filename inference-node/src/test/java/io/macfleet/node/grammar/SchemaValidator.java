package io.macfleet.node.grammar;

import java.util.List;
import java.util.Map;

/**
 * An independent check of a parsed JSON value against the schema subset, written from the JSON Schema rules (not
 * from the grammar): what the constrained outputs are held to.
 */
public final class SchemaValidator {
    private SchemaValidator() {
    }

    public static String problem(Object value, Object schema) {
        return problem(value, schema, schema, "$");
    }

    @SuppressWarnings("unchecked")
    private static String problem(Object value, Object schemaObject, Object root, String at) {
        if (Boolean.TRUE.equals(schemaObject)) {
            return null;
        }
        Map<String, Object> schema = (Map<String, Object>) schemaObject;
        if (schema.get("$ref") instanceof String ref) {
            String[] parts = ref.substring(2).split("/");
            return problem(value, ((Map<String, Object>) ((Map<String, Object>) root).get(parts[0])).get(parts[1]), root, at);
        }
        if (schema.containsKey("const")) {
            return value == null ? (schema.get("const") == null ? null : at + " is not the const")
                    : value.equals(schema.get("const")) ? null : at + " is not the const";
        }
        if (schema.get("enum") instanceof List<?> members) {
            return members.contains(value) ? null : at + " = " + value + " is not in the enum";
        }
        if (schema.get("anyOf") instanceof List<?> alternatives) {
            for (Object alternative : alternatives) {
                if (problem(value, alternative, root, at) == null) {
                    return null;
                }
            }
            return at + " matches no anyOf alternative";
        }
        Object type = schema.get("type");
        if (type instanceof List<?> types) {
            for (Object each : types) {
                Map<String, Object> copy = new java.util.HashMap<>(schema);
                copy.put("type", each);
                if (problem(value, copy, root, at) == null) {
                    return null;
                }
            }
            return at + " matches none of the types " + types;
        }
        if (type == null) {
            return null;
        }
        return switch ((String) type) {
            case "object" -> {
                if (!(value instanceof Map<?, ?> object)) {
                    yield at + " is not an object";
                }
                Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
                for (Object required : (List<Object>) schema.getOrDefault("required", List.of())) {
                    if (!object.containsKey(required)) {
                        yield at + " lacks required " + required;
                    }
                }
                for (Map.Entry<?, ?> entry : object.entrySet()) {
                    Object property = properties.get(entry.getKey());
                    if (property == null) {
                        if (Boolean.FALSE.equals(schema.get("additionalProperties"))) {
                            yield at + " has extra property " + entry.getKey();
                        }
                        continue;
                    }
                    String problem = problem(entry.getValue(), property, root, at + "." + entry.getKey());
                    if (problem != null) {
                        yield problem;
                    }
                }
                yield null;
            }
            case "array" -> {
                if (!(value instanceof List<?> list)) {
                    yield at + " is not an array";
                }
                for (int i = 0; i < list.size(); i++) {
                    String problem = schema.containsKey("items") ? problem(list.get(i), schema.get("items"), root, at + "[" + i + "]") : null;
                    if (problem != null) {
                        yield problem;
                    }
                }
                yield null;
            }
            case "string" -> value instanceof String ? null : at + " is not a string";
            case "integer" -> value instanceof Long ? null : at + " is not an integer: " + value;
            case "number" -> value instanceof Number ? null : at + " is not a number";
            case "boolean" -> value instanceof Boolean ? null : at + " is not a boolean";
            case "null" -> value == null ? null : at + " is not null";
            default -> at + " has unknown type " + type;
        };
    }
}
