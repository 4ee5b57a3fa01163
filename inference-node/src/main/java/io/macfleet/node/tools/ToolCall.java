package io.macfleet.node.tools;

/** One function call the model made: OpenAI's id, the function's name and its arguments as JSON text. */
public record ToolCall(String id, String name, String arguments) {
}
