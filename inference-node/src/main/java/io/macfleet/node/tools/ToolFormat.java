package io.macfleet.node.tools;

import io.macfleet.node.grammar.Node;
import io.macfleet.node.json.Json;
import io.macfleet.node.tokenizer.ChatTemplate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a model family writes tool calls and reads tool results, recognised from its chat template text:
 * Qwen 2.5 / Hermes ({@code <tool_call>} JSON {@code </tool_call>}), Llama 3.1 (a bare JSON object with
 * "parameters", results in the {@code ipython} role) and Mistral ({@code [TOOL_CALLS]} then a JSON array). NONE: the
 * template has no tool format; forced calls still work, constrained to a JSON array of calls this class defines.
 */
public enum ToolFormat {
    QWEN, LLAMA31, MISTRAL, NONE;

    /** The format of a template text (tokenizer.chat_template) of the given family; NONE when it shows none. */
    public static ToolFormat detect(String templateText, ChatTemplate family) {
        if (templateText == null || family == null) {
            return NONE;
        }
        if (family == ChatTemplate.CHATML && templateText.contains("<tool_call>")) {
            return QWEN;
        }
        if (family == ChatTemplate.LLAMA3 && templateText.contains("ipython")) {
            return LLAMA31;
        }
        if (family == ChatTemplate.MISTRAL && templateText.contains("[TOOL_CALLS]")) {
            return MISTRAL;
        }
        return NONE;
    }

    /** Whether the model can decide by itself to call (tool_choice auto): only with its own format. */
    public boolean supportsAuto() {
        return this != NONE;
    }

    /**
     * The grammar of one or more calls (only one when {@code parallel} is false) to one of {@code tools}, in this
     * format, each call's arguments valid against its function's parameters.
     */
    public Node callGrammar(List<Tool> tools, boolean parallel) {
        Node call = singleCall(tools);
        return switch (this) {
            case QWEN -> {
                Node framed = Node.sequence(List.of(Node.literal("<tool_call>\n"), call, Node.literal("\n</tool_call>")));
                yield parallel ? Node.repeat(framed, Node.literal("\n")) : framed;
            }
            case LLAMA31 -> call; // Llama 3.1's JSON tool calls are one per turn
            case MISTRAL, NONE -> Node.sequence(List.of(Node.literal("["),
                    parallel ? Node.repeat(call, Node.literal(",")) : call, Node.literal("]")));
        };
    }

    /** One call's JSON object, {"name":...,"arguments" (or "parameters"):...}, to one of {@code tools}. */
    Node singleCall(List<Tool> tools) {
        List<Node> calls = new ArrayList<>();
        String argumentsKey = this == LLAMA31 ? "parameters" : "arguments";
        for (Tool tool : tools) {
            calls.add(Node.sequence(List.of(Node.literal("{\"name\":" + Json.write(tool.name()) + ",\""
                    + argumentsKey + "\":"), tool.parameters(), Node.literal("}"))));
        }
        return Node.anyOf(calls);
    }

    /** The calls in a generated text with the content before them, or empty calls when the text holds none. */
    public Parsed parse(String text, List<Tool> tools) {
        List<Object> raw = new ArrayList<>();
        String content = text;
        String trimmed = text.strip();
        try {
            switch (this) {
                case QWEN -> {
                    Matcher matcher = Pattern.compile("<tool_call>\\s*(.*?)\\s*</tool_call>", Pattern.DOTALL).matcher(text);
                    int first = -1;
                    while (matcher.find()) {
                        first = first < 0 ? matcher.start() : first;
                        raw.add(Json.parse(matcher.group(1)));
                    }
                    content = first < 0 ? text : text.substring(0, first);
                }
                case LLAMA31 -> {
                    if (trimmed.startsWith("{")) {
                        raw.add(Json.parse(trimmed));
                        content = "";
                    }
                }
                case MISTRAL, NONE -> {
                    String body = trimmed.startsWith("[TOOL_CALLS]") ? trimmed.substring(12).strip() : trimmed;
                    if (body.startsWith("[{")) {
                        raw.addAll((List<?>) Json.parse(body));
                        content = "";
                    }
                }
            }
        } catch (RuntimeException e) {
            return new Parsed(text, List.of()); // not a well-formed call: the text is the answer
        }
        List<ToolCall> calls = new ArrayList<>();
        for (Object each : raw) {
            if (!(each instanceof Map<?, ?> call) || !(call.get("name") instanceof String name)
                    || tools.stream().noneMatch(tool -> tool.name().equals(name))) {
                return new Parsed(text, List.of());
            }
            Object arguments = call.containsKey("arguments") ? call.get("arguments") : call.get("parameters");
            if (!(arguments instanceof Map<?, ?>)) {
                return new Parsed(text, List.of());
            }
            calls.add(new ToolCall("call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24), name,
                    Json.write(arguments)));
        }
        return new Parsed(calls.isEmpty() ? text : content.strip(), List.copyOf(calls));
    }

    /** A generated text split into content (may be empty) and calls. */
    public record Parsed(String content, List<ToolCall> calls) {
    }

    /** The text of an assistant turn that made {@code calls}, as the model would have written it. */
    public String renderCalls(List<ToolCall> calls) {
        List<String> objects = new ArrayList<>();
        for (ToolCall call : calls) {
            objects.add("{\"name\":" + Json.write(call.name()) + ",\"" + (this == LLAMA31 ? "parameters" : "arguments")
                    + "\":" + call.arguments() + "}");
        }
        return switch (this) {
            case QWEN -> String.join("\n", objects.stream().map(o -> "<tool_call>\n" + o + "\n</tool_call>").toList());
            case LLAMA31 -> String.join("\n", objects);
            case MISTRAL -> "[TOOL_CALLS][" + String.join(",", objects) + "]";
            case NONE -> "[" + String.join(",", objects) + "]";
        };
    }

    /** A tool result as a chat message of the family: role and content. */
    public ChatTemplate.Message renderResult(String callId, String name, String content) {
        return switch (this) {
            case QWEN -> new ChatTemplate.Message("user", "<tool_response>\n" + content + "\n</tool_response>");
            case LLAMA31 -> new ChatTemplate.Message("ipython", content);
            case MISTRAL -> new ChatTemplate.Message("user", "[TOOL_RESULTS]" + Json.write(
                    ordered("call_id", callId, "content", content)) + "[/TOOL_RESULTS]");
            case NONE -> new ChatTemplate.Message("user", "Result of " + (name == null ? "the call " + callId : name)
                    + ": " + content);
        };
    }

    /** The instruction that declares the tools, as the family's template writes it into the system turn. */
    public String renderDeclarations(List<Tool> tools) {
        List<String> declarations = new ArrayList<>();
        for (Tool tool : tools) {
            declarations.add(Json.write(tool.declaration()));
        }
        return switch (this) {
            case QWEN -> "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                    + "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
                    + String.join("\n", declarations) + "\n</tools>\n\nFor each function call, return a json object "
                    + "with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                    + "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
            case LLAMA31 -> "Environment: ipython\n\nGiven the following functions, please respond with a JSON for a "
                    + "function call with its proper arguments that best answers the given prompt.\n\nRespond in the "
                    + "format {\"name\": function name, \"parameters\": dictionary of argument name and its value}. "
                    + "Do not use variables.\n\n" + String.join("\n\n", declarations);
            case MISTRAL -> "[AVAILABLE_TOOLS][" + String.join(",", declarations) + "][/AVAILABLE_TOOLS]";
            case NONE -> "You can call these functions:\n" + String.join("\n", declarations)
                    + "\nTo call them, answer with a JSON array of {\"name\": ..., \"arguments\": {...}} objects.";
        };
    }

    private static Map<String, Object> ordered(String k1, Object v1, String k2, Object v2) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put(k1, v1);
        map.put(k2, v2);
        return map;
    }
}
