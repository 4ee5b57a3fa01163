package io.macfleet.node.tools;

/**
 * What of an answer under tool_choice auto can be streamed as content before the answer is complete: text that
 * cannot be the start of a call in the family's format. Qwen: everything before {@code <tool_call>} (a suffix that
 * could begin the marker is held back); Llama 3.1 and Mistral: a call is the whole answer, so text streams once it
 * does not start with '{' (Llama) or '[' (Mistral).
 */
public final class StreamedText {
    private static final String QWEN_MARKER = "<tool_call>";

    private final ToolFormat format;
    private final StringBuilder text = new StringBuilder();
    private int streamed;
    private boolean callStarted;

    public StreamedText(ToolFormat format) {
        this.format = format;
    }

    /** Adds a piece of generated text; returns the text that may be streamed now (possibly empty). */
    public String offer(String piece) {
        text.append(piece);
        if (callStarted) {
            return "";
        }
        int safe;
        switch (format) {
            case QWEN -> {
                int marker = text.indexOf(QWEN_MARKER);
                if (marker >= 0) {
                    callStarted = true;
                    safe = marker;
                } else {
                    safe = text.length() - partialMarker();
                }
            }
            case LLAMA31, MISTRAL -> {
                String start = text.toString().stripLeading();
                if (start.isEmpty()) {
                    safe = streamed;
                } else if (start.charAt(0) == (format == ToolFormat.LLAMA31 ? '{' : '[')) {
                    callStarted = true;
                    safe = streamed;
                } else {
                    safe = text.length();
                }
            }
            default -> safe = streamed;
        }
        if (safe <= streamed) {
            return "";
        }
        String out = text.substring(streamed, safe);
        streamed = safe;
        return out;
    }

    /** After generation without calls: the text not streamed yet. */
    public String rest() {
        String out = text.substring(streamed);
        streamed = text.length();
        return out;
    }

    private int partialMarker() {
        for (int length = Math.min(QWEN_MARKER.length() - 1, text.length()); length > 0; length--) {
            if (QWEN_MARKER.startsWith(text.substring(text.length() - length))) {
                return length;
            }
        }
        return 0;
    }
}
