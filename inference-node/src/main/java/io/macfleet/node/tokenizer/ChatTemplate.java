package io.macfleet.node.tokenizer;

import io.macfleet.node.gguf.GgufFile;

import java.util.List;

/**
 * Chat prompt formats of the common model families, chosen from {@code tokenizer.chat_template} (recognised by
 * its marker tokens, not executed as Jinja) or, without a template, from the architecture and model name.
 */
public enum ChatTemplate {
    LLAMA3(List.of("<|eot_id|>", "<|end_of_text|>")),
    CHATML(List.of("<|im_end|>", "<|endoftext|>")),
    MISTRAL(List.of("</s>"));

    /** A chat message; role is system, user or assistant. */
    public record Message(String role, String content) {
    }

    private final List<String> stopTokens;

    ChatTemplate(List<String> stopTokens) {
        this.stopTokens = stopTokens;
    }

    /** Token texts that end the assistant's turn. */
    public List<String> stopTokens() {
        return stopTokens;
    }

    public static ChatTemplate detect(GgufFile file) {
        String template = file.string("tokenizer.chat_template", null);
        if (template != null) {
            return fromTemplate(template).orElseThrow(() -> file.error("unknown chat template in metadata "
                    + "'tokenizer.chat_template' (recognised: Llama 3 <|start_header_id|>, ChatML <|im_start|>, "
                    + "Mistral [INST]): " + abbreviate(template)));
        }
        String arch = file.string("general.architecture", "");
        String name = file.string("general.name", "").toLowerCase();
        if (arch.startsWith("qwen")) {
            return CHATML;
        }
        if (arch.equals("mistral") || name.contains("mistral") || name.contains("mixtral")) {
            return MISTRAL;
        }
        if (name.contains("llama-3") || name.contains("llama 3") || name.contains("llama3")) {
            return LLAMA3;
        }
        throw file.error("no 'tokenizer.chat_template' metadata and no known model family for architecture '" + arch
                + "' and name '" + name + "'; cannot choose a chat template");
    }

    public static java.util.Optional<ChatTemplate> fromTemplate(String template) {
        if (template.contains("<|start_header_id|>")) {
            return java.util.Optional.of(LLAMA3);
        }
        if (template.contains("<|im_start|>")) {
            return java.util.Optional.of(CHATML);
        }
        if (template.contains("[INST]")) {
            return java.util.Optional.of(MISTRAL);
        }
        return java.util.Optional.empty();
    }

    private static String abbreviate(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }

    /** The prompt text (with special tokens written out) ending where the assistant's reply begins. */
    public String render(List<Message> messages, String bosToken) {
        StringBuilder prompt = new StringBuilder();
        switch (this) {
            case LLAMA3 -> {
                prompt.append(bosToken == null ? "" : bosToken);
                for (Message message : messages) {
                    prompt.append("<|start_header_id|>").append(message.role()).append("<|end_header_id|>\n\n")
                            .append(message.content().strip()).append("<|eot_id|>");
                }
                prompt.append("<|start_header_id|>assistant<|end_header_id|>\n\n");
            }
            case CHATML -> {
                for (Message message : messages) {
                    prompt.append("<|im_start|>").append(message.role()).append('\n').append(message.content())
                            .append("<|im_end|>\n");
                }
                prompt.append("<|im_start|>assistant\n");
            }
            case MISTRAL -> {
                prompt.append(bosToken == null ? "" : bosToken);
                String system = null;
                for (Message message : messages) {
                    switch (message.role()) {
                        case "system" -> system = message.content();
                        case "user" -> {
                            String content = system == null ? message.content() : system + "\n\n" + message.content();
                            system = null;
                            prompt.append("[INST] ").append(content.strip()).append(" [/INST]");
                        }
                        default -> prompt.append(' ').append(message.content().strip()).append("</s>");
                    }
                }
            }
        }
        return prompt.toString();
    }
}
