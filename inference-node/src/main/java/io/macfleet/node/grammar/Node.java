package io.macfleet.node.grammar;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One piece of a compiled grammar: what bytes a JSON value (or a literal framing text around it) may consist of.
 * Nodes are compared by identity: the automaton's states hold them, and a schema compiles each node once.
 */
public sealed interface Node {
    /** A JSON object; properties come in schema order, optional ones may be skipped. {@code anyKeys}: any keys. */
    final class ObjectNode implements Node {
        final List<Property> properties;
        final boolean anyKeys;

        ObjectNode(List<Property> properties, boolean anyKeys) {
            this.properties = properties;
            this.anyKeys = anyKeys;
        }

        /** True when every property from {@code index} on is optional, so the object may close. */
        boolean mayClose(int index) {
            for (int i = index; i < properties.size(); i++) {
                if (properties.get(i).required) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A declared property; {@code key} is its JSON-quoted name followed by a colon, as generated. */
    final class Property {
        final String name;
        final byte[] key;
        final Node value;
        final boolean required;

        Property(String name, Node value, boolean required) {
            this.name = name;
            this.key = (Literal.quote(name) + ":").getBytes(StandardCharsets.UTF_8);
            this.value = value;
            this.required = required;
        }
    }

    final class ArrayNode implements Node {
        final Node items;

        ArrayNode(Node items) {
            this.items = items;
        }
    }

    final class StringNode implements Node {
        static final StringNode INSTANCE = new StringNode();
    }

    final class NumberNode implements Node {
        static final NumberNode NUMBER = new NumberNode(false);
        static final NumberNode INTEGER = new NumberNode(true);
        final boolean integer;

        private NumberNode(boolean integer) {
            this.integer = integer;
        }
    }

    /** Exact bytes: const and enum members (as compact JSON), true, false, null, and framing text. */
    final class Literal implements Node {
        final byte[] bytes;

        Literal(String text) {
            this.bytes = text.getBytes(StandardCharsets.UTF_8);
        }

        static String quote(String s) {
            return io.macfleet.node.json.Json.write(s);
        }
    }

    final class AnyOf implements Node {
        final List<Node> alternatives;

        AnyOf(List<Node> alternatives) {
            this.alternatives = alternatives;
        }
    }

    /** Any JSON value (json_object's values, schemas without a type). */
    final class AnyValue implements Node {
        static final AnyValue INSTANCE = new AnyValue();
    }

    /** Elements one after the other (a tool call's framing text around its JSON). */
    final class Sequence implements Node {
        final List<Node> elements;

        Sequence(List<Node> elements) {
            this.elements = elements;
        }
    }

    /** One or more of {@code item}, {@code separator} between them (parallel tool calls). */
    final class Repeat implements Node {
        final Node item;
        final Node separator;

        Repeat(Node item, Node separator) {
            this.item = item;
            this.separator = separator;
        }
    }

    /** A $ref, resolved after all definitions are compiled (so definitions may refer to themselves). */
    final class Reference implements Node {
        final String target;
        Node resolved;

        Reference(String target) {
            this.target = target;
        }
    }

    /** Factories for callers outside the package (tool-call framing). */
    static Node literal(String text) {
        return new Literal(text);
    }

    static Node sequence(List<Node> elements) {
        return new Sequence(List.copyOf(elements));
    }

    static Node anyOf(List<Node> alternatives) {
        return alternatives.size() == 1 ? alternatives.getFirst() : new AnyOf(List.copyOf(alternatives));
    }

    static Node repeat(Node item, Node separator) {
        return new Repeat(item, separator);
    }

    static Node anyObject() {
        return new ObjectNode(List.of(), true);
    }
}
