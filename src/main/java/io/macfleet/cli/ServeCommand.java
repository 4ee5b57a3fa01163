package io.macfleet.cli;

import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.database.DatabaseException;
import io.macfleet.database.StateDirectory;
import io.quarkus.runtime.Quarkus;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.ConfigProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Runs the long-lived service: REST API, console, health at /q/health, metrics at /q/metrics.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the macfleet service (REST API, web console, health at /q/health, metrics at /q/metrics).")
public class ServeCommand implements Callable<Integer> {

    @Inject
    DataSource dataSource;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        // Open and migrate the database now: a bad URL or a failed migration should stop the service at
        // start, not surface on the first request.
        try (Connection connection = dataSource.getConnection()) {
            connection.isValid(5);
        } catch (Exception e) {
            throw CommandException.checkFailed(e instanceof DatabaseException ? e.getMessage() : "database unavailable: " + e);
        }
        ConfigProvider.getConfig().getOptionalValue("macfleet.home", String.class).map(java.nio.file.Path::of)
                .flatMap(StateDirectory::exposureWarning)
                .ifPresent(warning -> spec.commandLine().getErr().println("macfleet serve: warning: " + warning));
        Quarkus.waitForExit();
        return ExitCodes.OK;
    }
}
