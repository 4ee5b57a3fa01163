package io.macfleet.node.server;

import io.macfleet.node.grammar.GrammarCache;
import io.macfleet.node.grammar.Node;
import io.macfleet.node.grammar.SchemaCompiler;
import io.macfleet.node.grammar.SchemaException;
import io.macfleet.node.json.Json;
import io.macfleet.node.tokenizer.ChatTemplate;
import io.macfleet.node.tools.Tool;
import io.macfleet.node.tools.ToolCall;
import io.macfleet.node.tools.ToolFormat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A /v1/chat/completions or /v1/completions body read and checked field by field, each bad field a 400 naming it.
 * Fields the node cannot honour are refused, never ignored.
 */
record CompletionRequest(boolean chat, List<ChatTemplate.Message> messages, String prompt, Integer maxTokens,
                         double temperature, int topK, double topP, double minP, Long seed, List<String> stop, int n,
                         int topLogprobs, double presencePenalty, double frequencyPenalty, boolean stream,
                         boolean includeUsage, Node grammar, List<Tool> tools, ToolChoice toolChoice) {
    /** What the model may do with the tools: NONE (no tools), AUTO, or FORCED (required or one named function). */
    enum ToolChoice { NONE, AUTO, FORCED }

    static CompletionRequest parse(Map<String, Object> body, boolean chat, ToolFormat format) {
        refuseUnsupported(body, chat);
        Integer maxTokens = null;
        String maxKey = chat && body.containsKey("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
        if (body.get(maxKey) != null) {
            maxTokens = (int) integer(body, maxKey, 0, 1, Integer.MAX_VALUE);
        }
        int n = (int) integer(body, "n", 1, 1, 8);
        int topLogprobs = -1;
        if (chat) {
            if (Boolean.TRUE.equals(bool(body, "logprobs"))) {
                topLogprobs = (int) integer(body, "top_logprobs", 0, 0, 20);
            } else if (body.get("top_logprobs") != null) {
                throw ApiException.badRequest("'top_logprobs' needs 'logprobs': true", "top_logprobs");
            }
        } else if (body.get("logprobs") != null) {
            topLogprobs = (int) integer(body, "logprobs", 0, 0, 5);
        }
        boolean stream = Boolean.TRUE.equals(bool(body, "stream"));
        boolean includeUsage = false;
        if (body.get("stream_options") != null) {
            if (!(body.get("stream_options") instanceof Map<?, ?> options)) {
                throw ApiException.badRequest("'stream_options' must be an object", "stream_options");
            }
            if (!stream) {
                throw ApiException.badRequest("'stream_options' is only allowed with 'stream': true", "stream_options");
            }
            includeUsage = Boolean.TRUE.equals(options.get("include_usage"));
        }
        Long seed = body.get("seed") == null ? null : integer(body, "seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        List<Tool> tools = chat ? tools(body.get("tools")) : List.of();
        ToolChoice choice = ToolChoice.NONE;
        Node grammar = null;
        if (!tools.isEmpty()) {
            Object toolChoice = body.get("tool_choice");
            boolean parallel = !Boolean.FALSE.equals(bool(body, "parallel_tool_calls"));
            if (toolChoice == null || "auto".equals(toolChoice)) {
                if (!format.supportsAuto()) {
                    throw ApiException.badRequest("this model's chat template has no tool-call format, so it cannot "
                            + "decide by itself to call a tool (tool_choice 'auto'); use tool_choice 'required' or "
                            + "name a function", "tool_choice");
                }
                choice = ToolChoice.AUTO;
            } else if ("required".equals(toolChoice)) {
                choice = ToolChoice.FORCED;
                grammar = callGrammar(format, tools, parallel);
            } else if ("none".equals(toolChoice)) {
                tools = List.of();
            } else if (toolChoice instanceof Map<?, ?> named && "function".equals(named.get("type"))
                    && named.get("function") instanceof Map<?, ?> function && function.get("name") instanceof String name) {
                List<Tool> chosen = tools.stream().filter(tool -> tool.name().equals(name)).toList();
                if (chosen.isEmpty()) {
                    throw ApiException.badRequest("tool_choice names function '" + name + "', which is not in 'tools'",
                            "tool_choice");
                }
                choice = ToolChoice.FORCED;
                grammar = callGrammar(format, chosen, parallel);
            } else {
                throw ApiException.badRequest("'tool_choice' must be \"none\", \"auto\", \"required\" or "
                        + "{\"type\":\"function\",\"function\":{\"name\":...}}", "tool_choice");
            }
        } else if (body.get("tool_choice") != null && !"none".equals(body.get("tool_choice"))) {
            throw ApiException.badRequest("'tool_choice' needs 'tools'", "tool_choice");
        }
        if (grammar == null && chat) {
            grammar = responseFormat(body.get("response_format"));
        }
        List<ChatTemplate.Message> messages = chat ? messages(body.get("messages"), format, tools) : null;
        return new CompletionRequest(chat, messages, chat ? null : promptText(body.get("prompt")), maxTokens,
                number(body, "temperature", 1.0, 0, 2), (int) integer(body, "top_k", 0, 0, Integer.MAX_VALUE),
                number(body, "top_p", 1.0, 0, 1), number(body, "min_p", 0, 0, 1), seed, stops(body.get("stop")), n,
                topLogprobs, number(body, "presence_penalty", 0, -2, 2), number(body, "frequency_penalty", 0, -2, 2),
                stream, includeUsage, grammar, tools, choice);
    }

    /** The calls' grammar, cached by what defines it: agents send the same tools every turn. */
    private static Node callGrammar(ToolFormat format, List<Tool> tools, boolean parallel) {
        StringBuilder key = new StringBuilder("calls " + format + " " + parallel);
        for (Tool tool : tools) {
            key.append(' ').append(Json.write(tool.declaration()));
        }
        return GrammarCache.get(key.toString(), () -> format.callGrammar(tools, parallel));
    }

    private static void refuseUnsupported(Map<String, Object> body, boolean chat) {
        if (body.get("logit_bias") instanceof Map<?, ?> bias && !bias.isEmpty()) {
            throw ApiException.badRequest("'logit_bias' is not supported by this server", "logit_bias");
        }
        for (String key : List.of("functions", "function_call")) {
            if (body.get(key) != null) {
                throw ApiException.badRequest("'" + key + "' (the deprecated function calling) is not supported; use "
                        + "'tools' and 'tool_choice'", key);
            }
        }
        if (chat && body.get("audio") != null) {
            throw ApiException.badRequest("'audio' output is not supported by this server", "audio");
        }
        if (!chat) {
            if (body.get("best_of") != null && integer(body, "best_of", 1, 1, 1) != 1) {
                throw ApiException.badRequest("'best_of' must be 1", "best_of");
            }
            if (Boolean.TRUE.equals(bool(body, "echo"))) {
                throw ApiException.badRequest("'echo' is not supported by this server", "echo");
            }
            if (body.get("suffix") != null) {
                throw ApiException.badRequest("'suffix' is not supported by this server", "suffix");
            }
        }
    }

    /** The grammar response_format asks for: null for text, any object for json_object, a schema's values. */
    private static Node responseFormat(Object value) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> format) || !(format.get("type") instanceof String type)) {
            throw ApiException.badRequest("'response_format' must be an object with a 'type'", "response_format");
        }
        return switch (type) {
            case "text" -> null;
            case "json_object" -> Node.anyObject();
            case "json_schema" -> {
                if (!(format.get("json_schema") instanceof Map<?, ?> jsonSchema) || !jsonSchema.containsKey("schema")) {
                    throw ApiException.badRequest("'response_format.json_schema' must be an object with a 'schema'",
                            "response_format.json_schema");
                }
                try {
                    yield GrammarCache.get("schema " + Json.write(jsonSchema.get("schema")),
                            () -> SchemaCompiler.compile(jsonSchema.get("schema")));
                } catch (SchemaException e) {
                    throw ApiException.badRequest("response_format.json_schema: " + e.getMessage(),
                            "response_format.json_schema.schema");
                }
            }
            default -> throw ApiException.badRequest("'response_format.type' must be text, json_object or json_schema; "
                    + "got " + Json.write(type), "response_format.type");
        };
    }

    private static List<Tool> tools(Object value) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw ApiException.badRequest("'tools' must be an array", "tools");
        }
        List<Tool> tools = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String param = "tools[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> tool) || !"function".equals(tool.get("type"))
                    || !(tool.get("function") instanceof Map<?, ?> function)
                    || !(function.get("name") instanceof String name) || !name.matches("[A-Za-z0-9_-]{1,64}")) {
                throw ApiException.badRequest(param + " must be {\"type\":\"function\",\"function\":{\"name\":...}} "
                        + "with a name of letters, digits, '_' or '-' (at most 64)", param);
            }
            Object parameters = function.get("parameters");
            Node grammar;
            Object schema = parameters == null
                    ? Map.of("type", "object", "properties", Map.of(), "additionalProperties", false) : parameters;
            try {
                grammar = GrammarCache.get("schema " + Json.write(schema), () -> SchemaCompiler.compile(schema));
            } catch (SchemaException e) {
                throw ApiException.badRequest("tool '" + name + "' has parameters that are not a supported schema: "
                        + e.getMessage(), param + ".function.parameters");
            }
            Map<String, Object> declaration = new LinkedHashMap<>();
            declaration.put("type", "function");
            declaration.put("function", function);
            tools.add(new Tool(name, declaration, grammar));
        }
        return List.copyOf(tools);
    }

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");

    /** The conversation as the template takes it: tools declared in the system turn, calls and results rendered. */
    private static List<ChatTemplate.Message> messages(Object value, ToolFormat format, List<Tool> tools) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw ApiException.badRequest("'messages' must be a non-empty array", "messages");
        }
        List<ChatTemplate.Message> messages = new ArrayList<>();
        Map<String, String> callNames = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String param = "messages[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> message)) {
                throw ApiException.badRequest(param + " must be an object", param);
            }
            Object role = message.get("role");
            if (!(role instanceof String r) || !ROLES.contains(r)) {
                throw ApiException.badRequest(param + ".role must be one of system, developer, user, assistant, tool; "
                        + "got " + Json.write(role), param + ".role");
            }
            switch (r) {
                case "tool" -> {
                    if (!(message.get("tool_call_id") instanceof String callId)) {
                        throw ApiException.badRequest(param + ".tool_call_id must be the id of the call it answers",
                                param + ".tool_call_id");
                    }
                    messages.add(format.renderResult(callId, callNames.get(callId),
                            content(message.get("content"), param + ".content")));
                }
                case "assistant" -> {
                    List<ToolCall> calls = calls(message.get("tool_calls"), param + ".tool_calls");
                    for (ToolCall call : calls) {
                        callNames.put(call.id(), call.name());
                    }
                    String text = message.get("content") == null && !calls.isEmpty() ? ""
                            : content(message.get("content"), param + ".content");
                    if (!calls.isEmpty()) {
                        text = (text.isEmpty() ? "" : text + "\n") + format.renderCalls(calls);
                    }
                    messages.add(new ChatTemplate.Message("assistant", text));
                }
                default -> messages.add(new ChatTemplate.Message(r.equals("developer") ? "system" : r,
                        content(message.get("content"), param + ".content")));
            }
        }
        if (!tools.isEmpty()) {
            String declarations = format.renderDeclarations(tools);
            if (format == ToolFormat.MISTRAL) {
                int lastUser = -1;
                for (int i = 0; i < messages.size(); i++) {
                    lastUser = messages.get(i).role().equals("user") ? i : lastUser;
                }
                if (lastUser >= 0) {
                    messages.set(lastUser, new ChatTemplate.Message("user", declarations + messages.get(lastUser).content()));
                }
            } else if (messages.getFirst().role().equals("system")) {
                messages.set(0, new ChatTemplate.Message("system", messages.getFirst().content() + "\n\n" + declarations));
            } else {
                messages.addFirst(new ChatTemplate.Message("system", declarations));
            }
        }
        return messages;
    }

    private static List<ToolCall> calls(Object value, String param) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw ApiException.badRequest(param + " must be an array", param);
        }
        List<ToolCall> calls = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Map<?, ?> call) || !(call.get("function") instanceof Map<?, ?> function)
                    || !(function.get("name") instanceof String name)
                    || !(function.get("arguments") instanceof String arguments)) {
                throw ApiException.badRequest(param + "[" + i + "] must be {\"id\":...,\"type\":\"function\","
                        + "\"function\":{\"name\":...,\"arguments\":\"<JSON text>\"}}", param + "[" + i + "]");
            }
            String id = call.get("id") instanceof String s ? s : "call_" + i;
            try {
                Json.parse(arguments);
            } catch (Json.JsonException e) {
                throw ApiException.badRequest(param + "[" + i + "].function.arguments is not JSON: " + e.getMessage(),
                        param + "[" + i + "].function.arguments");
            }
            calls.add(new ToolCall(id, name, arguments));
        }
        return calls;
    }

    private static String content(Object value, String param) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> parts) {
            StringBuilder text = new StringBuilder();
            for (Object part : parts) {
                if (!(part instanceof Map<?, ?> map) || !"text".equals(map.get("type")) || !(map.get("text") instanceof String s)) {
                    throw ApiException.badRequest(param + " parts must be {\"type\":\"text\",\"text\":...}", param);
                }
                text.append(s);
            }
            return text.toString();
        }
        throw ApiException.badRequest(param + " must be a string or an array of text parts", param);
    }

    private static String promptText(Object value) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> list && list.size() == 1 && list.getFirst() instanceof String s) {
            return s;
        }
        throw ApiException.badRequest("'prompt' must be a string (or an array of one string)", "prompt");
    }

    private static List<String> stops(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof String s) {
            return s.isEmpty() ? List.of() : List.of(s);
        }
        if (value instanceof List<?> list && list.size() <= 16) {
            List<String> stops = new ArrayList<>();
            for (Object element : list) {
                if (!(element instanceof String s)) {
                    throw ApiException.badRequest("'stop' must be a string or an array of strings", "stop");
                }
                if (!s.isEmpty()) {
                    stops.add(s);
                }
            }
            return stops;
        }
        throw ApiException.badRequest("'stop' must be a string or an array of at most 16 strings", "stop");
    }

    static double number(Map<String, Object> body, String key, double fallback, double min, double max) {
        Object value = body.get(key);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Number n) || n.doubleValue() < min || n.doubleValue() > max) {
            throw ApiException.badRequest("'" + key + "' must be a number from " + plain(min) + " to " + plain(max)
                    + ", got " + Json.write(value), key);
        }
        return n.doubleValue();
    }

    /** A whole number: 2 and 2.0 are, 1.5 and "2" are not (the API reference says integer). */
    static long integer(Map<String, Object> body, String key, long fallback, long min, long max) {
        Object value = body.get(key);
        if (value == null) {
            return fallback;
        }
        boolean whole = value instanceof Long || (value instanceof Double d && d == Math.rint(d) && Math.abs(d) < 9e15);
        if (!whole || ((Number) value).longValue() < min || ((Number) value).longValue() > max) {
            String range = min == max ? "must be " + min : max == Long.MAX_VALUE || max == Integer.MAX_VALUE
                    ? "must be a whole number of at least " + min : "must be a whole number from " + min + " to " + max;
            throw ApiException.badRequest("'" + key + "' " + range + ", got " + Json.write(value), key);
        }
        return ((Number) value).longValue();
    }

    private static String plain(double value) {
        return value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
    }

    private static Boolean bool(Map<String, Object> body, String key) {
        Object value = body.get(key);
        if (value != null && !(value instanceof Boolean)) {
            throw ApiException.badRequest("'" + key + "' must be true or false", key);
        }
        return (Boolean) value;
    }
}
