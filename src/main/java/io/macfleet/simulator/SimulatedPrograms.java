package io.macfleet.simulator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The programs every simulated Mac answers: the one list to extend with a new program (a class implementing {@link SimulatedProgram}). */
final class SimulatedPrograms {

    private SimulatedPrograms() {
    }

    static List<SimulatedProgram> standard() {
        return List.of(new SystemInformationPrograms(), new NetworkPrograms(), new RdmaPrograms(), new HealthPrograms(), new SettingsPrograms(), new FilePrograms(),
                new TextFilters(), new LaunchctlProgram(), new PowerPrograms(), new UpdatePrograms(), new ShasumProgram(), new CurlProgram(), new JavaProgram(),
                new ExpectProgram(), new LsofProgram(), new MlxPythonProgram());
    }

    /** Programs by name; two programs may not answer to the same name. */
    static Map<String, SimulatedProgram> byName(List<SimulatedProgram> programs) {
        Map<String, SimulatedProgram> byName = new LinkedHashMap<>();
        for (SimulatedProgram program : programs) {
            for (String name : program.names()) {
                SimulatedProgram earlier = byName.putIfAbsent(name, program);
                if (earlier != null) {
                    throw new IllegalArgumentException("two simulated programs answer to '" + name + "': " + earlier.getClass().getName()
                            + " and " + program.getClass().getName());
                }
            }
        }
        return Map.copyOf(byName);
    }
}
