package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * python3 on a simulated Mac, as far as the MLX runtime uses it: {@code python3 -m venv DIR} makes DIR/bin/python3,
 * {@code DIR/bin/python3 -m pip install mlx==X mlx-lm==Y} records the versions, {@code -c "...importlib.metadata..."}
 * prints them back ("mlx X mlx-lm Y"), {@code --version} answers as macOS's Command Line Tools python does. There is no
 * MLX off Apple silicon: the venv's bin/python3 is a script that runs {@link MlxServerStandIn} in a JVM of this host
 * when launchd starts it, which checks the launch contract as MLX does and then serves a labelled stand-in endpoint.
 * The Mac's RDMA devices (what ibv_devices lists) are written next to it whenever this program runs, for that check.
 */
final class MlxPythonProgram implements SimulatedProgram {

    static final String PACKAGES_FILE = ".simulated-packages";
    static final String DEVICES_FILE = ".simulated-rdma-devices";

    @Override
    public List<String> names() {
        return List.of("python3");
    }

    @Override
    public Result run(Call call) {
        List<String> arguments = call.arguments();
        String python = call.words().getFirst();
        Optional<Path> venv = venvOf(call.mac(), python);
        try {
            if (arguments.equals(List.of("--version"))) {
                return Result.ok("Python 3.9.6\n");
            }
            if (arguments.size() == 3 && arguments.get(0).equals("-m") && arguments.get(1).equals("venv")) {
                return createVenv(call, arguments.get(2));
            }
            if (venv.isEmpty()) {
                return Result.fail(1, "/usr/bin/python3: No module named " + (arguments.size() > 1 ? arguments.get(1) : "") + "\n");
            }
            writeDevices(call, venv.get());
            if (arguments.size() >= 3 && arguments.get(0).equals("-m") && arguments.get(1).equals("pip") && arguments.get(2).equals("install")) {
                List<String> packages = arguments.subList(3, arguments.size()).stream().filter(word -> word.contains("==")).toList();
                Files.writeString(venv.get().resolve(PACKAGES_FILE), String.join("\n", packages) + "\n");
                return Result.ok(packages.isEmpty() ? "" : "Successfully installed " + String.join(" ", packages.stream()
                        .map(spec -> spec.replace("==", "-")).toList()) + "\n");
            }
            if (arguments.size() == 2 && arguments.get(0).equals("-c") && arguments.get(1).contains("importlib.metadata")) {
                Path packages = venv.get().resolve(PACKAGES_FILE);
                String mlx = version(packages, "mlx");
                String mlxLm = version(packages, "mlx-lm");
                if (mlx == null || mlxLm == null) {
                    return Result.fail(1, "importlib.metadata.PackageNotFoundError: No package metadata was found for " + (mlx == null ? "mlx" : "mlx-lm") + "\n");
                }
                return Result.ok("mlx " + mlx + " mlx-lm " + mlxLm + "\n");
            }
            return Result.fail(2, "python3: the simulator answers -m venv, -m pip install, -c (versions) and --version only\n");
        } catch (IOException e) {
            return Result.fail(1, "python3: " + e.getMessage() + "\n");
        }
    }

    private static Optional<Path> venvOf(SimulatedMac mac, String python) {
        if (!python.startsWith("/") || !python.endsWith("/bin/python3")) {
            return Optional.empty();
        }
        Path venv = mac.resolve(python.substring(0, python.length() - "/bin/python3".length()));
        return Files.isRegularFile(venv.resolve("pyvenv.cfg")) ? Optional.of(venv) : Optional.empty();
    }

    private static String version(Path packages, String name) throws IOException {
        if (!Files.isRegularFile(packages)) {
            return null;
        }
        for (String line : Files.readAllLines(packages)) {
            if (line.startsWith(name + "==")) {
                return line.substring(name.length() + 2);
            }
        }
        return null;
    }

    private static Result createVenv(Call call, String directory) throws IOException {
        Path venv = call.mac().resolve(directory);
        Files.createDirectories(venv.resolve("bin"));
        Files.writeString(venv.resolve("pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.9.6\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        String script = "#!/bin/sh\n# The simulator's stand-in for this virtual environment's python3 (no MLX off Apple silicon).\n"
                + "exec '" + java + "' -Xmx96m -XX:TieredStopAtLevel=1 -D" + MlxServerStandIn.VENV_PROPERTY + "='" + directory + "' -D"
                + MlxServerStandIn.NODE_JAR_PROPERTY + "='" + nodeJar() + "' -cp '" + classPath() + "' "
                + MlxServerStandIn.class.getName() + " \"$@\"\n";
        Path python = venv.resolve("bin/python3");
        Files.writeString(python, script, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(python, PosixFilePermissions.fromString("rwxr-xr-x"));
        writeDevices(call, venv);
        return Result.ok("");
    }

    /** The bundled node's jar when this host has one (the stand-in serves a GGUF stand-in model with it), else "". */
    private static String nodeJar() {
        try {
            java.nio.file.Path jar = builtNodeJar();
            return jar != null && Files.isRegularFile(jar) ? jar.toAbsolutePath().toString() : "";
        } catch (RuntimeException none) {
            return "";
        }
    }

    /**
     * The node's jar as a build leaves it: MACFLEET_NODE_JAR, else inference-node/target/inference-node-*.jar under the
     * working directory or a directory above this code; null when there is none. (The simulator finds the program by
     * itself rather than through the product's deployment code.)
     */
    private static java.nio.file.Path builtNodeJar() {
        String configured = System.getenv("MACFLEET_NODE_JAR");
        if (configured != null && !configured.isBlank()) {
            return java.nio.file.Path.of(configured);
        }
        List<java.nio.file.Path> roots = new java.util.ArrayList<>(List.of(java.nio.file.Path.of("").toAbsolutePath()));
        try {
            java.nio.file.Path code = java.nio.file.Path.of(MlxPythonProgram.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (java.nio.file.Path parent = code; parent != null; parent = parent.getParent()) {
                roots.add(parent);
            }
        } catch (Exception unknown) {
            // The working directory is still tried.
        }
        for (java.nio.file.Path root : roots) {
            java.nio.file.Path target = root.resolve("inference-node").resolve("target");
            if (Files.isDirectory(target)) {
                try (var files = Files.list(target)) {
                    var jar = files.filter(file -> file.getFileName().toString().matches("inference-node-[^/]*\\.jar")
                            && !file.getFileName().toString().endsWith("-sources.jar")).findFirst();
                    if (jar.isPresent()) {
                        return jar.get();
                    }
                } catch (java.io.IOException e) {
                    // next candidate
                }
            }
        }
        return null;
    }

    /**
     * The class path the stand-in runs with: this JVM's, or for a Quarkus fast-jar (quarkus-run.jar, whose own class loader
     * finds the application) the application's and libraries' jars next to it.
     */
    static String classPath() {
        String classPath = System.getProperty("java.class.path");
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            if (entry.endsWith("quarkus-run.jar")) {
                Path app = Path.of(entry).toAbsolutePath().getParent();
                return app.resolve("app") + "/*" + java.io.File.pathSeparator + app.resolve("lib/main") + "/*" + java.io.File.pathSeparator
                        + app.resolve("lib/boot") + "/*";
            }
        }
        return classPath;
    }

    /** The Mac's RDMA devices with an active port, as ibv_devices lists them when RDMA is on. */
    private static void writeDevices(Call call, Path venv) throws IOException {
        List<String> names = new ArrayList<>();
        if (call.state().rdmaEnabled()) {
            call.fleet().rdmaDevices(call.mac()).forEach(device -> names.add(device.name()));
        }
        Files.writeString(venv.resolve(DEVICES_FILE), String.join("\n", names) + "\n");
    }
}
