package io.macfleet.cli;

import org.eclipse.microprofile.config.ConfigProvider;
import picocli.CommandLine.IVersionProvider;

/**
 * Reports the version of the build (from the Quarkus application version).
 */
public class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = ConfigProvider.getConfig().getOptionalValue("quarkus.application.version", String.class).orElse("unknown");
        return new String[] {"macfleet " + version, "Java " + Runtime.version()};
    }
}
