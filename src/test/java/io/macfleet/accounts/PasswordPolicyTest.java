package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** New passwords are refused when common, leaked or trivially repetitive, with the reason (issue 14, item 6). */
class PasswordPolicyTest {

    @Test
    void theListOfCommonPasswordsIsShippedAndBig() {
        assertThat(CommonPasswords.size()).isGreaterThanOrEqualTo(10_000);
    }

    @Test
    void commonAndLeakedPasswordsAreRefusedSayingWhy() {
        refused("password1234", "most common passwords");
        refused("PASSWORD1234", "most common passwords");
        refused("1qaz2wsx3edc", "most common passwords");
        refused("Sunshine2024!", "common password");
        refused("!!football99", "common password");
    }

    @Test
    void trivialPasswordsAreRefusedSayingWhy() {
        refused("aaaaaaaaaaaa", "different characters");
        refused("ababababababab", "different characters");
        refused("abcdabcdabcdabcd", "repeats");
        refused("123456789012", "run of consecutive characters");
        refused("abcdefghijklm", "run of consecutive characters");
        refused("zyxwvutsrqpon", "run of consecutive characters");
        // keyboard walks (issue 29's probe set qwertyuiopas), zxcvbn estimates under 10^8 guesses
        refused("qwertyuiopas", "keyboard walk");
        refused("asdfghjkl;'zx", "keyboard walk");
        refused("zxcvbnm,./qwe", "keyboard walk");
    }

    @Test
    void ordinaryPassphrasesPass() {
        Passwords.check(TestAccounts.PASSWORD);
        Passwords.check("long enough password");
        Passwords.check("a new long passphrase");
        Passwords.check("Tr0ub4dor&3-horse");
    }

    @Test
    void theMessageNeverRepeatsTheWholePassword() {
        assertThatThrownBy(() -> Passwords.check("Sunshine2024!")).hasMessageNotContaining("Sunshine2024!").hasMessageNotContaining("sunshine");
    }

    private static void refused(String password, String reason) {
        assertThatThrownBy(() -> Passwords.check(password)).as(password)
                .isInstanceOf(AccountException.class)
                .hasMessageContaining("too easy to guess")
                .hasMessageContaining(reason);
    }
}
