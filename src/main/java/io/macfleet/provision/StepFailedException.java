package io.macfleet.provision;

/** A step could not be done on a machine; the message says what is wrong there. */
public class StepFailedException extends RuntimeException {
    public StepFailedException(String message) {
        super(message);
    }

    public StepFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
