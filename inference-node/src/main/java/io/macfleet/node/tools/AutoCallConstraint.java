package io.macfleet.node.tools;

import io.macfleet.node.engine.TokenConstraint;
import io.macfleet.node.grammar.GrammarConstraint;
import io.macfleet.node.grammar.Node;
import io.macfleet.node.tokenizer.Tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * tool_choice "auto": the model writes freely until it starts a call in its family's format; from there the call
 * is constrained (a known function, arguments valid against its parameters) until it is complete, then the model is
 * free again. Qwen: after the text {@code <tool_call>}; Llama 3.1: when the answer starts with '{'; Mistral: after
 * the {@code [TOOL_CALLS]} token.
 */
public final class AutoCallConstraint implements TokenConstraint {
    private final ToolFormat format;
    private final List<Tool> tools;
    private final Tokenizer tokenizer;
    private final int mistralMarker;
    private final ByteArrayOutputStream text = new ByteArrayOutputStream();
    private GrammarConstraint call;

    public AutoCallConstraint(ToolFormat format, List<Tool> tools, Tokenizer tokenizer) {
        this.format = format;
        this.tools = tools;
        this.tokenizer = tokenizer;
        this.mistralMarker = tokenizer.id("[TOOL_CALLS]").orElse(-1);
    }

    @Override
    public boolean mask(float[] logits) {
        return call == null || call.mask(logits);
    }

    @Override
    public void accept(int token) {
        if (call != null) {
            call.accept(token);
            if (call.mustEnd() || (call.canEnd() && format == ToolFormat.QWEN)) {
                call = null; // the call is complete: free text (or another call) may follow
            }
            return;
        }
        String previous = text.toString(StandardCharsets.UTF_8);
        text.writeBytes(tokenizer.decode(token));
        String sofar = text.toString(StandardCharsets.UTF_8);
        switch (format) {
            case QWEN -> {
                int marker = sofar.lastIndexOf("<tool_call>");
                if (marker >= 0 && previous.lastIndexOf("<tool_call>") != marker) {
                    start(Node.sequence(List.of(Node.literal("\n"), ToolFormat.QWEN.singleCall(tools),
                            Node.literal("\n</tool_call>"))), sofar.substring(marker + "<tool_call>".length()));
                }
            }
            case LLAMA31 -> {
                if (previous.isBlank()) {
                    String trimmed = sofar.stripLeading();
                    if (trimmed.startsWith("{")) {
                        start(ToolFormat.LLAMA31.singleCall(tools), trimmed);
                    }
                }
            }
            case MISTRAL -> {
                if (token == mistralMarker) {
                    start(ToolFormat.MISTRAL.callGrammar(tools, true), "");
                }
            }
            case NONE -> {
            }
        }
    }

    /** Constrains from here, the call's text already written being {@code written}; free if it does not fit. */
    private void start(Node grammar, String written) {
        GrammarConstraint constraint = new GrammarConstraint(grammar, tokenizer);
        if (constraint.acceptBytes(written.getBytes(StandardCharsets.UTF_8))) {
            call = constraint.mustEnd() ? null : constraint;
        }
    }

    @Override
    public boolean canEnd() {
        return call == null || call.canEnd();
    }

    @Override
    public boolean mustEnd() {
        return false;
    }
}
