package io.macfleet.facts;

/**
 * {@code profiles status -type bootstraptoken}: whether the MDM server supports a bootstrap token and whether
 * this Mac has escrowed one (needed for MDM-driven OS updates on Apple silicon).
 */
public record BootstrapTokenStatus(boolean supportedOnServer, boolean escrowed) {

    /** Whether escrow can happen at all: only when the server supports bootstrap tokens. */
    public boolean escrowApplicable() {
        return supportedOnServer;
    }

    public static final String COMMAND = "profiles status -type bootstraptoken";

    public static BootstrapTokenStatus parse(String output) {
        Boolean supported = null;
        Boolean escrowed = null;
        for (String line : output.split("\\R")) {
            String text = line.strip();
            if (text.startsWith("profiles: Bootstrap Token supported on server:")) {
                supported = yes(text, "supported on server");
            } else if (text.startsWith("profiles: Bootstrap Token escrowed to server:")) {
                escrowed = yes(text, "escrowed to server");
            }
        }
        if (Boolean.FALSE.equals(supported) && escrowed == null) {
            // An MDM server without bootstrap-token support: profiles prints only the first line, and escrow does
            // not apply (seen on real Macs; macos-samples/profiles/status-bootstraptoken-server-unsupported.txt).
            return new BootstrapTokenStatus(false, false);
        }
        if (supported == null || escrowed == null) {
            throw new FactsParseException(COMMAND, "expected the lines 'profiles: Bootstrap Token supported on server: YES|NO' and "
                    + "'profiles: Bootstrap Token escrowed to server: YES|NO'");
        }
        return new BootstrapTokenStatus(supported, escrowed);
    }

    private static boolean yes(String line, String what) {
        String value = line.substring(line.lastIndexOf(':') + 1).strip();
        return switch (value) {
            case "YES" -> true;
            case "NO" -> false;
            default -> throw new FactsParseException(COMMAND, "Bootstrap Token " + what + ": expected YES or NO, got '" + value + "'");
        };
    }
}
