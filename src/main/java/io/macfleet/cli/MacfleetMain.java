package io.macfleet.cli;

import io.quarkus.runtime.ApplicationLifecycleManager;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import jakarta.inject.Inject;
import picocli.CommandLine;

/**
 * One program that is both the CLI and the service. The command line is looked at before Quarkus boots:
 * only `macfleet serve` may open the HTTP listener and run the scheduler, every other command is one-shot
 * (the pattern Keycloak uses for its `kc.sh` commands). Help, version, usage errors and the commands that need no
 * container do not boot Quarkus at all ({@link PlainCommandLine}).
 */
@QuarkusMain
public class MacfleetMain implements QuarkusApplication {

    @Inject
    CommandLine.IFactory factory;

    public static void main(String... args) {
        // Help, version, usage errors and container-free commands (inventory validate, ...) never boot Quarkus.
        var answered = PlainCommandLine.run(args);
        if (answered.isPresent()) {
            System.out.flush();
            System.err.flush();
            // Under @QuarkusMainTest the test framework installs a handler that records the exit code; otherwise exit.
            var testHandler = ApplicationLifecycleManager.getDefaultExitCodeHandler();
            if (testHandler != null) {
                testHandler.accept(answered.getAsInt(), null);
                return;
            }
            System.exit(answered.getAsInt());
        }
        if (!isServe(args)) {
            System.setProperty("quarkus.http.host-enabled", "false");
            System.setProperty("quarkus.scheduler.enabled", "false");
            System.setProperty("quarkus.banner.enabled", "false");
            if (System.getProperty("quarkus.log.console.level") == null) {
                System.setProperty("quarkus.log.console.level", "WARN");
            }
        }
        if (isServe(args) && firstCommand(args).equals("demo") && System.getProperty("macfleet.home") == null) {
            // The demo keeps its own state (database included) in its directory (--dir, else MACFLEET_HOME, else
            // ~/.macfleet/demo): applying the demo inventory must never replace the desired state of a real fleet
            // kept in the default home, and the directory, its database and its API token always go together.
            System.setProperty("macfleet.home", DemoCommand.directory(args).toString());
        }
        Quarkus.run(MacfleetMain.class, args);
    }

    private static String firstCommand(String... args) {
        for (String argument : args) {
            if (!argument.startsWith("-")) {
                return argument;
            }
        }
        return "";
    }

    static boolean isServe(String... args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("-")) {
                continue;
            }
            if (args[i].equals("demo")) {
                // `macfleet demo recovery|fault|machines` are clients of a running demo, not a second service.
                for (int j = i + 1; j < args.length; j++) {
                    if (!args[j].startsWith("-")) {
                        return !DEMO_CLIENT_COMMANDS.contains(args[j]);
                    }
                }
                return true;
            }
            return args[i].equals("serve");
        }
        return false;
    }

    private static final java.util.Set<String> DEMO_CLIENT_COMMANDS = java.util.Set.of("recovery", "fault", "machines", "reset");

    @Override
    public int run(String... args) {
        return PlainCommandLine.configure(new CommandLine(MacfleetCommand.class, factory)).execute(args);
    }
}
