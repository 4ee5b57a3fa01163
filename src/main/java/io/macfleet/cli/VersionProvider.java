package io.macfleet.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * Reports the version of the build, from a resource Maven fills in at build time (read without Quarkus, so that
 * {@code macfleet --version} does not boot it).
 */
public class VersionProvider implements IVersionProvider {

    static final String RESOURCE = "macfleet-version.properties";

    @Override
    public String[] getVersion() {
        return new String[] {"macfleet " + version(), "Java " + Runtime.version()};
    }

    static String version() {
        Properties properties = new Properties();
        try (InputStream in = VersionProvider.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String version = properties.getProperty("version", "unknown");
        return version.startsWith("${") ? "unknown" : version;
    }
}
