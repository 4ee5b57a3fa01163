package io.macfleet.provision;

/**
 * The answer to "already done?": satisfied or not, and what was seen (secrets redacted by the caller).
 *
 * @param detail what was seen, with the command, the expected pattern and the output's first line (for details and logs)
 * @param plain the same for a person at the machine: no patterns, no raw output
 */
public record CheckResult(boolean satisfied, String detail, String plain) {

    public CheckResult {
        plain = plain == null ? detail : plain;
    }

    public CheckResult(boolean satisfied, String detail) {
        this(satisfied, detail, detail);
    }

    public static CheckResult satisfied(String detail) {
        return new CheckResult(true, detail);
    }

    public static CheckResult notSatisfied(String detail) {
        return new CheckResult(false, detail);
    }

    public static CheckResult notSatisfied(String detail, String plain) {
        return new CheckResult(false, detail, plain);
    }
}
