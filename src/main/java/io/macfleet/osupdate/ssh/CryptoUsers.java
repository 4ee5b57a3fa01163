package io.macfleet.osupdate.ssh;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code diskutil apfs listCryptoUsers /}: the tree of cryptographic users of the Data volume. Each entry is a
 * {@code +-- UUID} line followed by {@code Type: …} and, on Apple silicon, {@code Volume Owner: Yes|No}, all behind
 * {@code |} drawing characters. A local account's UUID is its GeneratedUID ({@code dscl . -read /Users/NAME
 * GeneratedUID}); super checks a volume owner the same way. Real captures: {@code macos-samples/diskutil-apfs-listCryptoUsers/}.
 */
public final class CryptoUsers {
    private static final Pattern ENTRY = Pattern.compile("^[|\\s]*\\+[-\u2013\u2014]+\\s*([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})\\s*$");
    private static final Pattern PROPERTY = Pattern.compile("^[|\\s]*(Type|Volume Owner):\\s*(.+?)\\s*$");
    private static final Pattern HEADER = Pattern.compile("^Cryptographic users? for \\S+ \\((\\d+) found\\)\\s*$");
    private static final Pattern GENERATED_UID = Pattern.compile("^GeneratedUID:\\s*([0-9A-Fa-f-]{36})\\s*$");

    private CryptoUsers() {
    }

    /**
     * @param uuid upper case
     * @param volumeOwner empty when the output has no "Volume Owner" line (Intel Macs, older macOS)
     */
    public record CryptoUser(String uuid, String type, Optional<Boolean> volumeOwner) {
    }

    /** @throws IllegalArgumentException when the header is missing or the count does not match the entries */
    public static List<CryptoUser> parse(String output) {
        List<String> lines = output.lines().filter(line -> !line.isBlank()).toList();
        if (lines.isEmpty()) {
            throw new IllegalArgumentException("diskutil apfs listCryptoUsers /: empty output");
        }
        Matcher header = HEADER.matcher(lines.getFirst().strip());
        if (!header.matches()) {
            throw new IllegalArgumentException("diskutil apfs listCryptoUsers /: line 1: expected 'Cryptographic users for DISK (N found)', got '"
                    + lines.getFirst().strip() + "'");
        }
        List<CryptoUser> users = new ArrayList<>();
        String uuid = null;
        String type = null;
        Boolean owner = null;
        for (String line : lines.subList(1, lines.size())) {
            Matcher entry = ENTRY.matcher(line);
            Matcher property = PROPERTY.matcher(line);
            if (entry.matches()) {
                if (uuid != null) {
                    users.add(new CryptoUser(uuid, type == null ? "" : type, Optional.ofNullable(owner)));
                }
                uuid = entry.group(1).toUpperCase(Locale.ROOT);
                type = null;
                owner = null;
            } else if (property.matches() && uuid != null) {
                if (property.group(1).equals("Type")) {
                    type = property.group(2);
                } else {
                    owner = property.group(2).equalsIgnoreCase("Yes");
                }
            }
        }
        if (uuid != null) {
            users.add(new CryptoUser(uuid, type == null ? "" : type, Optional.ofNullable(owner)));
        }
        int expected = Integer.parseInt(header.group(1));
        if (users.size() != expected) {
            throw new IllegalArgumentException("diskutil apfs listCryptoUsers /: the header says " + expected + " user(s), " + users.size() + " entries were read");
        }
        return users;
    }

    /** {@code dscl . -read /Users/NAME GeneratedUID}: "GeneratedUID: UUID", upper case. */
    public static String generatedUid(String output) {
        for (String line : output.lines().toList()) {
            Matcher matcher = GENERATED_UID.matcher(line.strip());
            if (matcher.matches()) {
                return matcher.group(1).toUpperCase(Locale.ROOT);
            }
        }
        throw new IllegalArgumentException("dscl . -read /Users/NAME GeneratedUID: no 'GeneratedUID: UUID' line in '" + output.strip() + "'");
    }

    /**
     * Whether the account with this GeneratedUID may authorize an update: listed, and a volume owner (an entry without
     * a "Volume Owner" line counts as one only on outputs that have no such lines at all, as on older macOS).
     */
    public static boolean volumeOwner(List<CryptoUser> users, String generatedUid) {
        return users.stream().filter(user -> user.uuid().equalsIgnoreCase(generatedUid))
                .anyMatch(user -> user.volumeOwner().orElse(true));
    }
}
