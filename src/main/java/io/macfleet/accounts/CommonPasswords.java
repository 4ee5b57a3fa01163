package io.macfleet.accounts;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * NIST SP 800-63B (section 3.1.1.2) asks that new passwords be compared with a list of commonly used, expected or
 * compromised values, and refused with the reason. The list is zxcvbn's 30,000 most common passwords (from Mark
 * Burnett's set of 10 million leaked passwords), read from the zxcvbn4j jar (com.nulab-inc:zxcvbn, MIT licence),
 * and a few checks for passwords that are long but trivial: one character or a short unit repeated, a run such as
 * 123456789012 or abcdefghijkl, or anything zxcvbn's estimator (same jar) guesses in fewer than 10^8 tries, such as the
 * keyboard walk qwertyuiopas.
 */
final class CommonPasswords {

    static final String LIST = "com/nulabinc/zxcvbn/matchers/dictionaries/passwords.txt";
    private static final Set<String> COMMON = load();
    private static final com.nulabinc.zxcvbn.Zxcvbn ZXCVBN = new com.nulabinc.zxcvbn.Zxcvbn();
    /**
     * zxcvbn's guess estimate (its dictionaries, keyboard layouts, sequences, dates, l33t) below which a password is
     * refused: 10^8 is the bound of zxcvbn's score 2 ("protection from unthrottled online attacks"), which keyboard
     * walks such as qwertyuiopas (10^4.2) fall far below while passphrases of four words are above 10^12.
     */
    private static final double MINIMUM_GUESSES_LOG10 = 8;

    private CommonPasswords() {
    }

    static int size() {
        return COMMON.size();
    }

    /** Why the password is too easy to guess, or empty when it is not known to be. */
    static Optional<String> weakness(String password) {
        String lower = password.toLowerCase(Locale.ROOT);
        if (COMMON.contains(lower)) {
            return Optional.of("it is one of the " + COMMON.size() + " most common passwords (found in leaked password lists); choose another");
        }
        String base = lower.replaceAll("[^\\p{L}]+$", "").replaceAll("^[^\\p{L}]+", "");
        if (base.length() >= 4 && lower.length() - base.length() <= 6 && COMMON.contains(base)) {
            return Optional.of("it is a common password ('" + mask(base) + "...') with a few digits or symbols added; choose another");
        }
        if (lower.codePoints().distinct().count() <= 3) {
            return Optional.of("it has only " + lower.codePoints().distinct().count() + " different characters; choose one that is not a repetition");
        }
        for (int unit = 1; unit <= lower.length() / 2; unit++) {
            if (lower.length() % unit == 0 && lower.substring(0, unit).repeat(lower.length() / unit).equals(lower)) {
                return Optional.of("it repeats '" + mask(lower.substring(0, unit)) + "' over and over; choose one that is not a repetition");
            }
        }
        if (isRun(lower)) {
            return Optional.of("it is a run of consecutive characters (like 123456789012 or abcdefghijkl); choose another");
        }
        double guessesLog10 = ZXCVBN.measure(password).getGuessesLog10();
        if (guessesLog10 < MINIMUM_GUESSES_LOG10) {
            return Optional.of(String.format(Locale.ROOT, "a guesser would find it within %d million tries (zxcvbn estimates about 10^%.0f): "
                    + "it is mostly a keyboard walk (like qwertyuiop), a common word or name, a date or a sequence; choose another",
                    (long) Math.pow(10, MINIMUM_GUESSES_LOG10 - 6), guessesLog10));
        }
        return Optional.empty();
    }

    /** Every character one after (or one before) the previous, digits wrapping around from 9 to 0. */
    private static boolean isRun(String text) {
        int[] points = text.codePoints().toArray();
        for (int direction : new int[] {1, -1}) {
            boolean run = true;
            for (int i = 1; i < points.length && run; i++) {
                int expected = points[i - 1] + direction;
                if (Character.isDigit(points[i - 1])) {
                    expected = '0' + Math.floorMod(points[i - 1] - '0' + direction, 10);
                }
                run = points[i] == expected;
            }
            if (run) {
                return true;
            }
        }
        return false;
    }

    /** Just enough of a fragment to recognise it; messages never repeat a whole password. */
    private static String mask(String fragment) {
        return fragment.length() <= 3 ? fragment : fragment.substring(0, 3);
    }

    private static Set<String> load() {
        try (InputStream in = CommonPasswords.class.getClassLoader().getResourceAsStream(LIST)) {
            if (in == null) {
                throw new IllegalStateException(LIST + " (the zxcvbn4j jar) is missing from the class path");
            }
            Set<String> words = new HashSet<>(40_000);
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                if (!line.isBlank()) {
                    words.add(line.strip().toLowerCase(Locale.ROOT));
                }
            }
            return Set.copyOf(words);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
