package io.macfleet.accounts;

/** A refused account operation (bad name, weak password, unknown user, last admin); the message says what and why. */
public class AccountException extends RuntimeException implements io.macfleet.command.CommandFailure {

    private final boolean invalidInput;

    private AccountException(String message, boolean invalidInput) {
        super(message);
        this.invalidInput = invalidInput;
    }

    /** The input itself is wrong (a name, a password, a duration): a usage error. */
    static AccountException invalid(String message) {
        return new AccountException(message, true);
    }

    /** The input is fine but the state forbids it (unknown user, name taken, last admin). */
    static AccountException refused(String message) {
        return new AccountException(message, false);
    }

    public boolean invalidInput() {
        return invalidInput;
    }

    @Override
    public Kind failureKind() {
        return invalidInput ? Kind.USAGE : Kind.CHECK_FAILED;
    }
}
