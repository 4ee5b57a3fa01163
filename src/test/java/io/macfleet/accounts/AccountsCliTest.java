package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.quarkus.dev.console.QuarkusConsole;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * `macfleet users` and `macfleet tokens`, run in-process the way the launcher runs them, with the password piped
 * into standard input. The test database lives as long as the JVM, so each test uses its own user names.
 */
@QuarkusMainTest
class AccountsCliTest {

    private static final String PASSWORD = "a long enough password";
    private final InputStream originalIn = System.in;

    @AfterEach
    void restoreStdin() {
        System.setIn(originalIn);
    }

    /**
     * Runs the command with {@code stdin} as its standard input. Quarkus' console replaces System.in once per JVM
     * (installRedirects) with a stream nothing writes to in tests; installed first, it stays replaced by ours.
     */
    private static LaunchResult withStdin(QuarkusMainLauncher launcher, String stdin, String... args) {
        QuarkusConsole.installRedirects();
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        return launcher.launch(args);
    }

    /** Output lines without the log lines the main-test launcher mixes in. */
    private static List<String> lines(LaunchResult result) {
        return result.getOutput().lines().filter(line -> !line.matches("^\\d\\d:\\d\\d:\\d\\d .*")).toList();
    }

    @Test
    void addListSetRolePasswordRemove(QuarkusMainLauncher launcher) {
        assertThat(withStdin(launcher, PASSWORD + "\n", "users", "add", "alice", "--role", "admin").exitCode()).isEqualTo(ExitCodes.OK);
        LaunchResult added = withStdin(launcher, PASSWORD + "\n", "users", "add", "bob", "--role", "viewer");
        assertThat(added.exitCode()).isEqualTo(ExitCodes.OK);
        assertThat(added.getOutput()).contains("Added user bob with role viewer.");

        LaunchResult list = launcher.launch("users", "list");
        assertThat(list.exitCode()).isZero();
        assertThat(lines(list)).anySatisfy(line -> assertThat(line).startsWith("alice").contains("admin", "active"))
                .anySatisfy(line -> assertThat(line).startsWith("bob").contains("viewer"));
        assertThat(list.getOutput()).doesNotContain(PASSWORD).doesNotContain("$2");

        assertThat(launcher.launch("users", "set-role", "bob", "operator").exitCode()).isZero();
        assertThat(launcher.launch("users", "list").getOutput()).containsPattern("bob\\s+operator");
        assertThat(withStdin(launcher, "an entirely new password\n", "users", "password", "bob").exitCode()).isZero();
        assertThat(launcher.launch("users", "remove", "bob").exitCode()).isZero();
        assertThat(launcher.launch("users", "list").getOutput()).doesNotContain("bob");
        LaunchResult again = launcher.launch("users", "remove", "bob");
        assertThat(again.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(again.getErrorOutput()).contains("no user named 'bob'");

        LaunchResult audit = launcher.launch("audit", "--action", "user.add");
        assertThat(audit.getOutput()).contains("cli:", "user bob with role viewer").doesNotContain(PASSWORD);
    }

    @Test
    void thePasswordIsNeverAnArgument(QuarkusMainLauncher launcher) {
        LaunchResult option = withStdin(launcher, "", "users", "add", "carol", "--role", "viewer", "--password", PASSWORD);
        assertThat(option.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(option.getErrorOutput()).contains("Unknown option");
        LaunchResult positional = withStdin(launcher, "", "users", "add", "carol", PASSWORD, "--role", "viewer");
        assertThat(positional.exitCode()).isEqualTo(ExitCodes.USAGE);
        LaunchResult passwordCommand = withStdin(launcher, "", "users", "password", "carol", PASSWORD);
        assertThat(passwordCommand.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(launcher.launch("users", "list").getOutput()).doesNotContain("carol");
    }

    @Test
    void badInputIsAUsageError(QuarkusMainLauncher launcher) {
        LaunchResult tooShort = withStdin(launcher, "short\n", "users", "add", "dave", "--role", "viewer");
        assertThat(tooShort.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(tooShort.getErrorOutput()).contains("too short: at least 12 characters").doesNotContain("short\n");
        LaunchResult noPassword = withStdin(launcher, "", "users", "add", "dave", "--role", "viewer");
        assertThat(noPassword.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noPassword.getErrorOutput()).contains("no password on standard input");
        LaunchResult badRole = withStdin(launcher, PASSWORD + "\n", "users", "add", "dave", "--role", "root");
        assertThat(badRole.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badRole.getErrorOutput()).contains("unknown role 'root'; expected one of: viewer, operator, admin");
        LaunchResult badName = withStdin(launcher, PASSWORD + "\n", "users", "add", "Dave Smith", "--role", "viewer");
        assertThat(badName.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badName.getErrorOutput()).contains("user name 'Dave Smith' is not valid");
        assertThat(launcher.launch("users", "list").getOutput()).doesNotContain("dave");
    }

    @Test
    void theLastAdminStays(QuarkusMainLauncher launcher) {
        assertThat(withStdin(launcher, PASSWORD + "\n", "users", "add", "only-admin", "--role", "admin").exitCode()).isZero();
        // Other tests may have added admins to the shared database: remove all but this one first.
        for (String line : lines(launcher.launch("users", "list"))) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length > 1 && columns[1].equals("admin") && !columns[0].equals("only-admin")) {
                assertThat(launcher.launch("users", "remove", columns[0]).exitCode()).isZero();
            }
        }
        LaunchResult demote = launcher.launch("users", "set-role", "only-admin", "viewer");
        assertThat(demote.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(demote.getErrorOutput()).contains("last admin");
        assertThat(launcher.launch("users", "remove", "only-admin").exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(launcher.launch("users", "disable", "only-admin").exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
    }

    @Test
    void tokensAreShownOnceListedWithoutTheSecretAndRevoked(QuarkusMainLauncher launcher) {
        assertThat(withStdin(launcher, PASSWORD + "\n", "users", "add", "ci-bot", "--role", "operator").exitCode()).isZero();
        LaunchResult created = launcher.launch("tokens", "create", "--user", "ci-bot", "--name", "pipeline", "--expires", "30d");
        assertThat(created.exitCode()).isZero();
        String token = lines(created).stream().filter(line -> line.startsWith("mft_")).findFirst().orElseThrow();
        assertThat(token).hasSize(4 + 43);
        assertThat(created.getErrorOutput()).contains("shown only now").contains("expires");

        LaunchResult list = launcher.launch("tokens", "list", "--user", "ci-bot");
        assertThat(list.getOutput()).contains("pipeline", "never").doesNotContain(token).doesNotContain(token.substring(4, 20));
        String id = lines(list).stream().filter(line -> line.contains("pipeline")).findFirst().orElseThrow().trim().split("\\s+")[0];

        LaunchResult duplicate = launcher.launch("tokens", "create", "--user", "ci-bot", "--name", "pipeline");
        assertThat(duplicate.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(duplicate.getErrorOutput()).contains("already has a token named 'pipeline'");
        LaunchResult badExpiry = launcher.launch("tokens", "create", "--user", "ci-bot", "--name", "other", "--expires", "soon");
        assertThat(badExpiry.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badExpiry.getErrorOutput()).contains("--expires 'soon' is not a duration");
        assertThat(launcher.launch("tokens", "create", "--user", "nobody", "--name", "x").exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);

        assertThat(launcher.launch("tokens", "revoke", id).exitCode()).isZero();
        assertThat(launcher.launch("tokens", "list", "--user", "ci-bot").getOutput()).doesNotContain("pipeline");
        assertThat(launcher.launch("tokens", "revoke", id).exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(launcher.launch("audit", "--action", "token.revoke").getOutput()).contains("'pipeline' of user ci-bot");
    }
}
