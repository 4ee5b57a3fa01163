package io.macfleet.node.grammar;

import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A byte-level pushdown automaton over a compiled {@link Node} grammar. A state is a set of stacks (several when
 * anyOf alternatives or optional properties are still open); each stack is an immutable linked list of frames, so
 * advancing shares everything below the top and walking the token trie costs one small allocation per byte.
 * Whitespace: at most one space after a ':' or ',' (byte-level vocabularies have tokens such as {@code ": "} that
 * models trained on formatted JSON prefer), none elsewhere, so every output stays finite.
 */
final class Automaton {
    /** Digits allowed in each part of a number: enough for a double, and it bounds the output. */
    static final int MAX_DIGITS = 16;
    /**
     * Digits of an integer: JSON Schema's integer has no range, but clients map it to 32-bit types (LangChain4j's
     * int fields through Jackson refused a 16-digit value), so generated integers stay within 9 digits.
     */
    static final int MAX_INTEGER_DIGITS = 9;

    private Automaton() {
    }

    /** An immutable stack; {@link #EMPTY} means the grammar is complete. Records compare structurally. */
    record Stack(Frame top, Stack rest) {
        static final Stack EMPTY = new Stack(null, null);

        Stack push(Frame frame) {
            return new Stack(frame, this);
        }
    }

    static Set<Stack> start(Node root) {
        Set<Stack> state = new LinkedHashSet<>();
        state.add(Stack.EMPTY.push(new Value(root)));
        return state;
    }

    static boolean complete(Set<Stack> state) {
        for (Stack stack : state) {
            if (canReachEmpty(stack)) {
                return true;
            }
        }
        return false;
    }

    private static boolean canReachEmpty(Stack stack) {
        while (stack.top != null) {
            if (!stack.top.canEnd()) {
                return false;
            }
            stack = stack.rest;
        }
        return true;
    }

    /** The state after one more byte; empty when the byte cannot come next. */
    static Set<Stack> advance(Set<Stack> state, int b) {
        Set<Stack> next = new LinkedHashSet<>(Math.max(4, state.size() * 2));
        for (Stack stack : state) {
            step(stack, b, next);
        }
        return next;
    }

    private static void step(Stack stack, int b, Set<Stack> out) {
        while (stack.top != null) {
            stack.top.step(b, stack.rest, out);
            if (!stack.top.canEnd()) {
                return;
            }
            stack = stack.rest; // the frame may end here, so the byte may also belong to what follows it
        }
    }

    /** One pending piece of work on a stack. */
    sealed interface Frame {
        void step(int b, Stack rest, Set<Stack> out);

        default boolean canEnd() {
            return false;
        }
    }

    /** A value of {@code node} not yet started. */
    record Value(Node node) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            switch (node) {
                case Node.ObjectNode object -> {
                    if (b == '{') {
                        out.add(rest.push(new ObjectFrame(object, 0, ObjectFrame.FIRST)));
                    }
                }
                case Node.ArrayNode array -> {
                    if (b == '[') {
                        out.add(rest.push(new ArrayFrame(array.items, ArrayFrame.FIRST)));
                    }
                }
                case Node.StringNode ignored -> {
                    if (b == '"') {
                        out.add(rest.push(StringFrame.OPEN));
                    }
                }
                case Node.NumberNode number -> NumberFrame.begin(number.integer, b, rest, out);
                case Node.Literal literal -> {
                    if (literal.bytes.length > 0 && (literal.bytes[0] & 0xFF) == b) {
                        out.add(literal.bytes.length == 1 ? rest : rest.push(new LiteralFrame(literal, 1)));
                    }
                }
                case Node.AnyOf anyOf -> {
                    for (Node alternative : anyOf.alternatives) {
                        new Value(alternative).step(b, rest, out);
                    }
                }
                case Node.AnyValue ignored -> {
                    for (Node alternative : ANY_VALUE) {
                        new Value(alternative).step(b, rest, out);
                    }
                }
                case Node.Sequence sequence -> {
                    Stack pushed = rest;
                    for (int i = sequence.elements.size() - 1; i >= 1; i--) {
                        pushed = pushed.push(new Value(sequence.elements.get(i)));
                    }
                    Automaton.step(pushed.push(new Value(sequence.elements.getFirst())), b, out);
                }
                case Node.Repeat repeat -> new Value(repeat.item).step(b, rest.push(new RepeatTail(repeat)), out);
                case Node.Reference reference -> new Value(reference.resolved).step(b, rest, out);
            }
        }
    }

    private static final List<Node> ANY_VALUE = List.of(Node.anyObject(), new Node.ArrayNode(Node.AnyValue.INSTANCE),
            Node.StringNode.INSTANCE, Node.NumberNode.NUMBER, new Node.Literal("true"), new Node.Literal("false"),
            new Node.Literal("null"));

    /** After one item of a repeat: the separator and another item may follow, or nothing. */
    record RepeatTail(Node.Repeat repeat) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            Automaton.step(rest.push(this).push(new Value(repeat.item)).push(new Value(repeat.separator)), b, out);
        }

        @Override
        public boolean canEnd() {
            return true;
        }
    }

    /** One optional space (after ':' or ','). */
    record Space() implements Frame {
        static final Space INSTANCE = new Space();

        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (b == ' ') {
                out.add(rest);
            }
        }

        @Override
        public boolean canEnd() {
            return true;
        }
    }

    record LiteralFrame(Node.Literal literal, int position) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if ((literal.bytes[position] & 0xFF) == b) {
                out.add(position + 1 == literal.bytes.length ? rest : rest.push(new LiteralFrame(literal, position + 1)));
            }
        }
    }

    /**
     * Inside a string after the opening quote. {@code continuation}: UTF-8 continuation bytes still owed;
     * {@code escape}: 0 none, 1 after a backslash, 2-5 hex digits of a \\u escape still owed (5 means four).
     * {@code lowest}: the smallest allowed next continuation byte's high bits (overlong and surrogate checks).
     */
    record StringFrame(int continuation, int escape, int lowest, int highest) implements Frame {
        static final StringFrame OPEN = new StringFrame(0, 0, 0x80, 0xBF);

        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (continuation > 0) {
                if (b >= lowest && b <= highest) {
                    out.add(continuation == 1 ? rest.push(OPEN) : rest.push(new StringFrame(continuation - 1, 0, 0x80, 0xBF)));
                }
                return;
            }
            if (escape == 1) {
                if ("\"\\/bfnrt".indexOf(b) >= 0) {
                    out.add(rest.push(OPEN));
                } else if (b == 'u') {
                    out.add(rest.push(new StringFrame(0, 5, 0, 0)));
                }
                return;
            }
            if (escape >= 2) {
                if ((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')) {
                    out.add(rest.push(escape == 2 ? OPEN : new StringFrame(0, escape - 1, 0, 0)));
                }
                return;
            }
            if (b == '"') {
                out.add(rest);
            } else if (b == '\\') {
                out.add(rest.push(new StringFrame(0, 1, 0, 0)));
            } else if (b >= 0x20 && b < 0x80) {
                out.add(rest.push(OPEN));
            } else if (b >= 0xC2 && b <= 0xDF) {
                out.add(rest.push(new StringFrame(1, 0, 0x80, 0xBF)));
            } else if (b >= 0xE0 && b <= 0xEF) {
                out.add(rest.push(new StringFrame(2, 0, b == 0xE0 ? 0xA0 : 0x80, b == 0xED ? 0x9F : 0xBF)));
            } else if (b >= 0xF0 && b <= 0xF4) {
                out.add(rest.push(new StringFrame(3, 0, b == 0xF0 ? 0x90 : 0x80, b == 0xF4 ? 0x8F : 0xBF)));
            }
        }
    }

    /**
     * A number by RFC 8259's grammar. Parts: 0 after '-', 1 integer part started with 0, 2 integer digits, 3 after
     * '.', 4 fraction digits, 5 after 'e', 6 after the exponent's sign, 7 exponent digits.
     */
    record NumberFrame(boolean integer, int part, int digits) implements Frame {
        static void begin(boolean integer, int b, Stack rest, Set<Stack> out) {
            if (b == '-') {
                out.add(rest.push(new NumberFrame(integer, 0, 0)));
            } else if (b == '0') {
                out.add(rest.push(new NumberFrame(integer, 1, 1)));
            } else if (b >= '1' && b <= '9') {
                out.add(rest.push(new NumberFrame(integer, 2, 1)));
            }
        }

        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            boolean digit = b >= '0' && b <= '9';
            switch (part) {
                case 0 -> {
                    if (b == '0') {
                        out.add(rest.push(new NumberFrame(integer, 1, 1)));
                    } else if (digit) {
                        out.add(rest.push(new NumberFrame(integer, 2, 1)));
                    }
                }
                case 1, 2 -> {
                    if (digit && part == 2 && digits < (integer ? MAX_INTEGER_DIGITS : MAX_DIGITS)) {
                        out.add(rest.push(new NumberFrame(integer, 2, digits + 1)));
                    } else if (b == '.' && !integer) {
                        out.add(rest.push(new NumberFrame(false, 3, 0)));
                    } else if ((b == 'e' || b == 'E') && !integer) {
                        out.add(rest.push(new NumberFrame(false, 5, 0)));
                    }
                }
                case 3, 4 -> {
                    if (digit && digits < MAX_DIGITS) {
                        out.add(rest.push(new NumberFrame(false, 4, digits + 1)));
                    } else if ((b == 'e' || b == 'E') && part == 4) {
                        out.add(rest.push(new NumberFrame(false, 5, 0)));
                    }
                }
                case 5 -> {
                    if (b == '+' || b == '-') {
                        out.add(rest.push(new NumberFrame(false, 6, 0)));
                    } else if (digit) {
                        out.add(rest.push(new NumberFrame(false, 7, 1)));
                    }
                }
                default -> {
                    if (digit && digits < 3) {
                        out.add(rest.push(new NumberFrame(false, 7, digits + 1)));
                    }
                }
            }
        }

        @Override
        public boolean canEnd() {
            return part == 1 || part == 2 || part == 4 || part == 7;
        }
    }

    /** Inside an array: phase FIRST (after '['), NEXT (after an item). */
    record ArrayFrame(Node items, int phase) implements Frame {
        static final int FIRST = 0, NEXT = 1;

        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (b == ']') {
                out.add(rest);
            } else if (phase == NEXT && b == ',') {
                out.add(rest.push(this).push(new Value(items)).push(Space.INSTANCE));
            } else if (phase == FIRST) {
                new Value(items).step(b, rest.push(new ArrayFrame(items, NEXT)), out);
            }
        }
    }

    /**
     * Inside an object: phase FIRST (after '{'), KEY (after ','), NEXT (after a value). {@code index}: the first
     * declared property that may still come (they come in schema order).
     */
    record ObjectFrame(Node.ObjectNode object, int index, int phase) implements Frame {
        static final int FIRST = 0, KEY = 1, NEXT = 2;

        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (b == '}' && phase != KEY && (object.anyKeys || object.mayClose(index))) {
                out.add(rest);
            } else if (b == ',' && phase == NEXT && (object.anyKeys || index < object.properties.size())) {
                out.add(rest.push(new ObjectFrame(object, index, KEY)).push(Space.INSTANCE));
            } else if (b == '"' && phase != NEXT) {
                if (object.anyKeys) {
                    Stack after = rest.push(new ObjectFrame(object, 0, NEXT)).push(new Value(Node.AnyValue.INSTANCE))
                            .push(Space.INSTANCE).push(new LiteralFrame(COLON, 0));
                    out.add(after.push(StringFrame.OPEN));
                    return;
                }
                BitSet candidates = new BitSet();
                for (int i = index; i < object.properties.size(); i++) {
                    candidates.set(i);
                    if (object.properties.get(i).required) {
                        break;
                    }
                }
                if (!candidates.isEmpty()) {
                    out.add(rest.push(new KeyFrame(object, candidates, 1)));
                }
            }
        }
    }

    private static final Node.Literal COLON = new Node.Literal(":");

    /** Inside a declared key (its quote and name, then the colon); candidates narrow as bytes come. */
    record KeyFrame(Node.ObjectNode object, BitSet candidates, int position) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            BitSet next = new BitSet();
            for (int i = candidates.nextSetBit(0); i >= 0; i = candidates.nextSetBit(i + 1)) {
                Node.Property property = object.properties.get(i);
                if ((property.key[position] & 0xFF) == b) {
                    if (position + 1 == property.key.length) {
                        out.add(rest.push(new ObjectFrame(object, i + 1, ObjectFrame.NEXT)).push(new Value(property.value))
                                .push(Space.INSTANCE));
                    } else {
                        next.set(i);
                    }
                }
            }
            if (!next.isEmpty()) {
                out.add(rest.push(new KeyFrame(object, next, position + 1)));
            }
        }
    }
}
