package io.macfleet.node.gguf;

/** A model file that is not valid GGUF, or not usable by the engine; the message names file and place. */
public class GgufFormatException extends RuntimeException {
    public GgufFormatException(String message) {
        super(message);
    }
}
