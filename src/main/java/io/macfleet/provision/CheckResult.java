package io.macfleet.provision;

/** The answer to "already done?": satisfied or not, and what was seen (secrets redacted by the caller). */
public record CheckResult(boolean satisfied, String detail) {

    public static CheckResult satisfied(String detail) {
        return new CheckResult(true, detail);
    }

    public static CheckResult notSatisfied(String detail) {
        return new CheckResult(false, detail);
    }
}
