package io.macfleet.secrets;

/**
 * A referenced secret could not be read. The message names the reference, never a value.
 */
public class SecretUnavailableException extends RuntimeException {
    public SecretUnavailableException(String message) {
        super(message);
    }
}
