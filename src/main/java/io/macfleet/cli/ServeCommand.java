package io.macfleet.cli;

import io.quarkus.runtime.Quarkus;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * Runs the long-lived service: REST API, console, health at /q/health, metrics at /q/metrics.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the macfleet service (REST API, web console, health at /q/health, metrics at /q/metrics).")
public class ServeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        Quarkus.waitForExit();
        return ExitCodes.OK;
    }
}
