package io.macfleet.accounts;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads a password from the terminal with echo off (asked twice), or from standard input when it is piped
 * (the first line). Never from the command line: arguments are visible to every local user in the process list
 * and end up in shell history.
 */
final class PasswordInput {

    private PasswordInput() {
    }

    static String read(String prompt) throws IOException {
        Console console = System.console();
        if (console != null && console.isTerminal()) {
            char[] first = console.readPassword("%s: ", prompt);
            if (first == null) {
                throw AccountException.invalid("no password entered");
            }
            String password = new String(first);
            Arrays.fill(first, ' ');
            Passwords.check(password);
            char[] again = console.readPassword("%s (again): ", prompt);
            String confirmation = again == null ? "" : new String(again);
            if (again != null) {
                Arrays.fill(again, ' ');
            }
            if (!password.equals(confirmation)) {
                throw AccountException.invalid("the two passwords differ");
            }
            return password;
        }
        BufferedReader reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = reader.readLine();
        if (line == null || line.isEmpty()) {
            throw AccountException.invalid("no password on standard input (pipe it in, e.g. `printf '%s\\n' \"$PASSWORD\" | macfleet users add ...`, or run in a terminal)");
        }
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }
}
