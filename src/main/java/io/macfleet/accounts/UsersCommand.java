package io.macfleet.accounts;

import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.database.DatabaseException;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** `macfleet users`: local accounts of the console and the API. Passwords are read from a prompt or stdin, never arguments. */
@Command(name = "users", mixinStandardHelpOptions = true,
        description = {"Manage the local accounts of the web console and the REST API.",
                "Roles: viewer (read), operator (also run provisioning, confirm manual steps), admin (also accounts, inventory apply).",
                "Passwords are asked for with echo off (twice), or read from the first line of standard input when it is piped;",
                "never given as an argument. At least " + Passwords.MINIMUM_LENGTH + " characters."},
        subcommands = {UsersCommand.Add.class, UsersCommand.ListUsers.class, UsersCommand.Remove.class, UsersCommand.SetRole.class,
                UsersCommand.Password.class, UsersCommand.Disable.class, UsersCommand.Enable.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:refused (unknown user, last admin, database failure)", "2:a bad name, role or password"})
public class UsersCommand implements Callable<Integer> {

    @Inject
    AccountService accounts;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw CommandException.reported(CommandFailure.Kind.USAGE);
    }

    /**
     * Runs one account change. Refusals (AccountException, a CommandFailure) are reported by the CLI's one failure
     * handler; a database failure keeps its message without the command's name.
     */
    static int run(CommandSpec spec, Change change) {
        try {
            change.run(spec.commandLine().getOut());
            spec.commandLine().getOut().flush();
            return ExitCodes.OK;
        } catch (IllegalArgumentException e) {
            throw CommandException.line(CommandFailure.Kind.USAGE, "macfleet " + spec.qualifiedName().replace("macfleet ", "") + ": " + e.getMessage());
        } catch (DatabaseException e) {
            throw CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet: " + e.getMessage());
        } catch (IOException e) {
            throw CommandException.line(CommandFailure.Kind.USAGE, "macfleet: cannot read the password: " + e.getMessage());
        }
    }

    @FunctionalInterface
    interface Change {
        void run(PrintWriter out) throws IOException;
    }

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Add an account; the password is asked for (or read from stdin).")
    static class Add implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME", description = "1 to 64 of a-z 0-9 . _ -")
        String name;
        @Option(names = "--role", required = true, paramLabel = "ROLE", description = "viewer, operator or admin")
        String role;

        @Override
        public Integer call() {
            return run(spec, out -> {
                Role parsed = Role.parse(role);
                AccountService.checkUserName(name);
                parent.accounts.user(name).ifPresent(existing -> {
                    throw AccountException.refused("user '" + name + "' already exists (change it with `macfleet users set-role` or `users password`)");
                });
                String password = PasswordInput.read("Password for " + name);
                parent.accounts.addUser(name, parsed, password, Actors.commandLine());
                out.println("Added user " + name + " with role " + parsed.id() + ".");
            });
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the accounts.")
    static class ListUsers implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            return run(spec, out -> {
                List<Account> users = parent.accounts.users();
                if (users.isEmpty()) {
                    out.println("No accounts yet: run `macfleet users add NAME --role admin`.");
                    return;
                }
                out.printf("%-24s %-9s %-21s %s%n", "NAME", "ROLE", "CREATED (UTC)", "STATE");
                for (Account user : users) {
                    out.printf("%-24s %-9s %-21s %s%n", user.name(), user.role().id(), user.created().truncatedTo(ChronoUnit.SECONDS),
                            user.disabled() ? "disabled" : "active");
                }
            });
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove an account with its sessions and API tokens (never the last admin).")
    static class Remove implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            return run(spec, out -> {
                parent.accounts.removeUser(name, Actors.commandLine());
                out.println("Removed user " + name + " and its sessions and API tokens.");
            });
        }
    }

    @Command(name = "set-role", mixinStandardHelpOptions = true, description = "Change an account's role (never demotes the last admin).")
    static class SetRole implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Parameters(index = "1", paramLabel = "ROLE", description = "viewer, operator or admin")
        String role;

        @Override
        public Integer call() {
            return run(spec, out -> {
                Role parsed = Role.parse(role);
                parent.accounts.setRole(name, parsed, Actors.commandLine());
                out.println("User " + name + " now has role " + parsed.id() + ".");
            });
        }
    }

    @Command(name = "password", mixinStandardHelpOptions = true, description = "Set an account's password (asked for, or read from stdin); ends its sessions.")
    static class Password implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            return run(spec, out -> {
                if (parent.accounts.user(name).isEmpty()) {
                    throw AccountException.refused("no user named '" + name + "' (see `macfleet users list`)");
                }
                parent.accounts.setPassword(name, PasswordInput.read("New password for " + name), Actors.commandLine());
                out.println("Password of " + name + " changed; its sessions were ended.");
            });
        }
    }

    @Command(name = "disable", mixinStandardHelpOptions = true, description = "Disable an account: no login, sessions ended, API tokens refused.")
    static class Disable implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            return run(spec, out -> {
                parent.accounts.setDisabled(name, true, Actors.commandLine());
                out.println("User " + name + " is disabled.");
            });
        }
    }

    @Command(name = "enable", mixinStandardHelpOptions = true, description = "Enable a disabled account again.")
    static class Enable implements Callable<Integer> {
        @ParentCommand
        UsersCommand parent;
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            return run(spec, out -> {
                parent.accounts.setDisabled(name, false, Actors.commandLine());
                out.println("User " + name + " is enabled.");
            });
        }
    }
}
