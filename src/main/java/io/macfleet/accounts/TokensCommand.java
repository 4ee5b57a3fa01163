package io.macfleet.accounts;

import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** `macfleet tokens`: API tokens, each acting as one user with that user's role. Only their hashes are stored. */
@Command(name = "tokens", mixinStandardHelpOptions = true,
        description = {"Manage API tokens for the REST API (Authorization: Bearer TOKEN).",
                "A token acts as its user, with the user's current role. It is printed once, when created; only its hash is stored."},
        subcommands = {TokensCommand.Create.class, TokensCommand.ListTokens.class, TokensCommand.Revoke.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:refused (unknown user or token, name taken, database failure)", "2:a bad option value"})
public class TokensCommand implements Callable<Integer> {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,6})([dhm])");

    @Inject
    AccountService accounts;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw CommandException.reported(CommandFailure.Kind.USAGE);
    }

    /** 30d, 12h, 90m. */
    static Duration parseLifetime(String text) {
        Matcher matcher = DURATION.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (!matcher.matches() || Long.parseLong(matcher.group(1)) == 0) {
            throw AccountException.invalid("--expires '" + text + "' is not a duration; expected a positive number of days, hours or minutes such as 30d, 12h or 90m");
        }
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
            case "d" -> Duration.ofDays(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofMinutes(amount);
        };
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a token for a user and print it (the only time it is shown).")
    static class Create implements Callable<Integer> {
        @ParentCommand
        TokensCommand parent;
        @Spec
        CommandSpec spec;
        @Option(names = "--user", required = true, paramLabel = "NAME", description = "the user the token acts as")
        String user;
        @Option(names = "--name", required = true, paramLabel = "LABEL", description = "what the token is for, e.g. ci or grafana (unique per user)")
        String name;
        @Option(names = "--expires", paramLabel = "DURATION", description = "lifetime such as 30d, 12h or 90m (default: no expiry)")
        String expires;

        @Override
        public Integer call() {
            return UsersCommand.run(spec, out -> {
                Duration lifetime = expires == null ? null : parseLifetime(expires);
                AccountService.IssuedToken issued = parent.accounts.createToken(user, name, lifetime, Actors.commandLine());
                out.println(issued.token());
                out.flush();
                spec.commandLine().getErr().println("Token " + issued.id() + " '" + issued.name() + "' for user " + issued.user()
                        + (issued.expires() == null ? ", no expiry" : ", expires " + issued.expires().truncatedTo(ChronoUnit.SECONDS))
                        + ". It is shown only now: store it in a secret store. Use: Authorization: Bearer TOKEN");
            });
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List tokens (never the tokens themselves).")
    static class ListTokens implements Callable<Integer> {
        @ParentCommand
        TokensCommand parent;
        @Spec
        CommandSpec spec;
        @Option(names = "--user", paramLabel = "NAME", description = "only this user's tokens")
        String user;

        @Override
        public Integer call() {
            return UsersCommand.run(spec, out -> {
                List<ApiToken> tokens = parent.accounts.tokens(user);
                if (tokens.isEmpty()) {
                    out.println("No API tokens" + (user == null ? "" : " for user " + user) + ".");
                    return;
                }
                Instant now = Instant.now();
                out.printf("%-6s %-20s %-20s %-21s %-21s %s%n", "ID", "USER", "NAME", "CREATED (UTC)", "LAST USED", "EXPIRES");
                for (ApiToken token : tokens) {
                    out.printf("%-6d %-20s %-20s %-21s %-21s %s%n", token.id(), token.user(), token.name(), seconds(token.created()),
                            token.lastUsed() == null ? "never" : seconds(token.lastUsed()),
                            token.expires() == null ? "never" : seconds(token.expires()) + (token.expired(now) ? " (expired)" : ""));
                }
            });
        }

        private static String seconds(Instant instant) {
            return instant.truncatedTo(ChronoUnit.SECONDS).toString();
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke a token by its id (see `tokens list`); it stops working at once.")
    static class Revoke implements Callable<Integer> {
        @ParentCommand
        TokensCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "ID")
        long id;

        @Override
        public Integer call() {
            return UsersCommand.run(spec, out -> {
                ApiToken revoked = parent.accounts.revokeToken(id, Actors.commandLine());
                out.println("Revoked token " + revoked.id() + " '" + revoked.name() + "' of user " + revoked.user() + ".");
            });
        }
    }
}
