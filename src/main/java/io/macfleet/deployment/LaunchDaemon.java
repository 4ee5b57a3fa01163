package io.macfleet.deployment;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The LaunchDaemon that runs the inference node on a Mac, as launchd.plist(5) describes it: launchd starts it at
 * load ({@code RunAtLoad}) and restarts it whenever it exits ({@code KeepAlive}), at most once per
 * {@code ThrottleInterval} seconds; {@code ProcessType Interactive} exempts it from the CPU and I/O throttling
 * macOS applies to background daemons; its output goes to files under {@link #LOG_DIRECTORY}.
 *
 * @param label reverse-DNS name, also the plist's file name; letters, digits, '.', '-', '_' only
 * @param programArguments argv, absolute program first (launchd does no shell expansion)
 * @param environment EnvironmentVariables, rendered in name order
 * @param workingDirectory absolute, or null for launchd's default (/)
 * @param numberOfFiles SoftResourceLimits NumberOfFiles (launchd's default soft limit of 256 is too few for a server)
 * @param userName UserName: the account launchd runs the program as, or null for root (launchd's default)
 */
public record LaunchDaemon(String label, List<String> programArguments, Map<String, String> environment,
                           String workingDirectory, boolean keepAlive, boolean runAtLoad, int throttleIntervalSeconds,
                           String standardOutPath, String standardErrorPath, int numberOfFiles, String userName) {

    /** Run as root (no UserName). */
    public LaunchDaemon(String label, List<String> programArguments, Map<String, String> environment, String workingDirectory,
                        boolean keepAlive, boolean runAtLoad, int throttleIntervalSeconds, String standardOutPath,
                        String standardErrorPath, int numberOfFiles) {
        this(label, programArguments, environment, workingDirectory, keepAlive, runAtLoad, throttleIntervalSeconds, standardOutPath,
                standardErrorPath, numberOfFiles, null);
    }

    public static final String LOG_DIRECTORY = "/var/log/macfleet/";
    public static final String DAEMON_DIRECTORY = "/Library/LaunchDaemons/";
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,200}");

    public LaunchDaemon {
        if (label == null || !LABEL.matcher(label).matches() || label.contains("..")) {
            throw new IllegalArgumentException("launchd label '" + label + "' is not a reverse-DNS name (letters, digits,"
                    + " '.', '-', '_'; no '..'): it is also the file name under " + DAEMON_DIRECTORY);
        }
        if (programArguments == null || programArguments.isEmpty() || !programArguments.getFirst().startsWith("/")) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": ProgramArguments must start with an absolute"
                    + " program path (launchd searches no PATH for daemons), got " + programArguments);
        }
        for (String argument : programArguments) {
            requirePrintable(label, "ProgramArguments", argument);
        }
        environment = Map.copyOf(environment == null ? Map.of() : environment);
        environment.forEach((name, value) -> {
            if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException("LaunchDaemon " + label + ": environment variable name '" + name + "' is not valid");
            }
            requirePrintable(label, "EnvironmentVariables " + name, value);
        });
        if (workingDirectory != null && !workingDirectory.startsWith("/")) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": WorkingDirectory must be absolute, got " + workingDirectory);
        }
        if (throttleIntervalSeconds < 1) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": ThrottleInterval must be at least 1 s, got "
                    + throttleIntervalSeconds);
        }
        requireLog(label, "StandardOutPath", standardOutPath);
        requireLog(label, "StandardErrorPath", standardErrorPath);
        if (numberOfFiles < 256) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": NumberOfFiles must be at least launchd's default"
                    + " of 256, got " + numberOfFiles);
        }
        if (userName != null && !userName.matches("[A-Za-z_][A-Za-z0-9_.-]{0,63}")) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": UserName '" + userName + "' is not a macOS account name");
        }
        programArguments = List.copyOf(programArguments);
    }

    /** The same daemon run as {@code user} (launchd's UserName) instead of root. */
    public LaunchDaemon runAs(String user) {
        return new LaunchDaemon(label, programArguments, environment, workingDirectory, keepAlive, runAtLoad, throttleIntervalSeconds,
                standardOutPath, standardErrorPath, numberOfFiles, user);
    }

    /** The node's daemon with macfleet's defaults: kept alive, started at load, 10 s throttle, logs per label. */
    public static LaunchDaemon node(String label, List<String> programArguments, Map<String, String> environment,
                                    String workingDirectory) {
        return new LaunchDaemon(label, programArguments, environment, workingDirectory, true, true, 10,
                LOG_DIRECTORY + label + ".out.log", LOG_DIRECTORY + label + ".err.log", 65536);
    }

    /** Where the plist lives on the Mac. */
    public String plistPath() {
        return DAEMON_DIRECTORY + label + ".plist";
    }

    /** The environment in the order it is rendered. */
    public Map<String, String> sortedEnvironment() {
        return new TreeMap<>(environment);
    }

    private static void requireLog(String label, String key, String path) {
        if (path == null || !path.startsWith(LOG_DIRECTORY) || path.contains("/../") || path.endsWith("/")) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": " + key + " must be a file under " + LOG_DIRECTORY
                    + ", got " + path);
        }
        requirePrintable(label, key, path);
    }

    private static void requirePrintable(String label, String key, String value) {
        if (value == null) {
            throw new IllegalArgumentException("LaunchDaemon " + label + ": " + key + " is missing");
        }
        // XML 1.0 cannot carry most control characters at all, escaped or not.
        for (int index = 0; index < value.length(); index++) {
            char character = value.charAt(index);
            if (character < 0x20 && character != '\t') {
                throw new IllegalArgumentException("LaunchDaemon " + label + ": " + key + " contains control character U+"
                        + String.format("%04X", (int) character) + ", which a plist cannot hold");
            }
        }
    }
}
