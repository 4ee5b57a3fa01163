package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a command line the way zsh would for the simple commands macfleet sends: words with single quotes,
 * double quotes and backslash escapes, separated into commands by {@code ;}, {@code &&}, {@code ||} and {@code |}.
 * No expansion ($VAR, globs) is done.
 */
public final class ShellWords {
    /** One simple command and the operator that follows it ("" for the last one). */
    public record Command(List<String> words, String operatorAfter) {
    }

    private ShellWords() {
    }

    public static List<Command> parse(String line) {
        List<Command> commands = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '\'') {
                int end = line.indexOf('\'', i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("zsh: unmatched '");
                }
                word.append(line, i + 1, end);
                inWord = true;
                i = end + 1;
            } else if (c == '"') {
                i++;
                inWord = true;
                while (true) {
                    if (i >= line.length()) {
                        throw new IllegalArgumentException("zsh: unmatched \"");
                    }
                    char d = line.charAt(i);
                    if (d == '"') {
                        i++;
                        break;
                    }
                    if (d == '\\' && i + 1 < line.length() && "\"\\$`".indexOf(line.charAt(i + 1)) >= 0) {
                        word.append(line.charAt(i + 1));
                        i += 2;
                    } else {
                        word.append(d);
                        i++;
                    }
                }
            } else if (c == '\\' && i + 1 < line.length()) {
                word.append(line.charAt(i + 1));
                inWord = true;
                i += 2;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                i++;
            } else if (c == ';' || c == '&' || c == '|') {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                String operator;
                if (c == '&' && i + 1 < line.length() && line.charAt(i + 1) == '&') {
                    operator = "&&";
                } else if (c == '|' && i + 1 < line.length() && line.charAt(i + 1) == '|') {
                    operator = "||";
                } else if (c == '&') {
                    throw new IllegalArgumentException("background jobs (&) are not supported by the simulator");
                } else {
                    operator = String.valueOf(c);
                }
                commands.add(new Command(List.copyOf(words), operator));
                words.clear();
                i += operator.length();
            } else {
                word.append(c);
                inWord = true;
                i++;
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        if (!words.isEmpty() || commands.isEmpty()) {
            commands.add(new Command(List.copyOf(words), ""));
        }
        return commands;
    }
}
