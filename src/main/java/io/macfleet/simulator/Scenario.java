package io.macfleet.simulator;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A scenario file: cables to plug and faults to inject, in order.
 *
 * <pre>
 * cables:
 *   - {a: studio-01:1, b: studio-02:1, speed: TB5}
 * faults:
 *   - {machine: studio-02, fault: slow, millis: 2000}
 *   - {cable: studio-01:1, fault: tb4}
 * </pre>
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record Scenario(List<CableSpec> cables, List<FaultStep> faults) {

    /** A cable of the scenario. */
    public record CableSpec(String a, String b, String speed) {
    }

    public static Scenario load(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("scenario file " + file + " does not exist");
        }
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
        try {
            Scenario scenario = yaml.readValue(file.toFile(), Scenario.class);
            return scenario == null ? new Scenario(List.of(), List.of()) : scenario;
        } catch (IOException e) {
            throw new IOException("scenario file " + file + " is not valid: " + e.getMessage(), e);
        }
    }

    /** Plugs the cables, then injects the faults in order. */
    public void applyTo(SimulatedFleet fleet) {
        if (cables != null) {
            for (CableSpec cable : cables) {
                LinkSpeed speed = cable.speed() == null ? LinkSpeed.TB5 : LinkSpeed.valueOf(cable.speed().toUpperCase(java.util.Locale.ROOT));
                fleet.cabling().plug(cable.a(), cable.b(), speed);
            }
        }
        if (faults != null) {
            faults.forEach(fleet::inject);
        }
    }
}
