package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;

/**
 * installer -pkg PATH -target / (root only; any file stands for a JDK package: it installs /usr/bin/java), in the
 * three lines macOS prints (as quoted in many public install logs: "installer: Package name is …", "installer:
 * Installing at base path /", "installer: The install was successful.").
 *
 * java -version: what Temurin 25 prints (on standard error, as every JDK does; captured from Temurin 25.0.3, see
 * SOURCES.md); without a JDK, macOS's /usr/bin/java stub answers that no Java runtime is installed.
 *
 * java [OPTIONS] -jar JAR ARGUMENTS: a jar on the Mac runs for real in this host's JVM (as launchd runs the node),
 * its file arguments mapped into the Mac's file system, for at most ten minutes (what the deploy's load check runs).
 */
final class JavaProgram implements SimulatedProgram {

    static final String TEMURIN_25 = """
            openjdk version "25.0.3" 2026-04-21 LTS
            OpenJDK Runtime Environment Temurin-25.0.3+9 (build 25.0.3+9-LTS)
            OpenJDK 64-Bit Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS, mixed mode, sharing)
            """;
    static final String NO_RUNTIME = "The operation couldn\u2019t be completed. Unable to locate a Java Runtime.\n"
            + "Please visit http://www.java.com for information on installing Java.\n\n";

    @Override
    public List<String> names() {
        return List.of("java", "installer");
    }

    @Override
    public Result run(Call call) {
        if (call.program().equals("installer")) {
            return installer(call);
        }
        if (!call.mac().hasJava()) {
            return Result.fail(1, NO_RUNTIME);
        }
        if (call.arguments().equals(List.of("-version")) || call.arguments().equals(List.of("--version"))) {
            return new Result("", TEMURIN_25, 0, null);
        }
        int jar = call.arguments().indexOf("-jar");
        if (jar >= 0 && jar + 1 < call.arguments().size()) {
            return runJar(call, jar);
        }
        return Result.fail(1, "java: the simulator answers java -version and java -jar JAR only\n");
    }

    private static Result runJar(Call call, int jarIndex) {
        String jarPath = call.arguments().get(jarIndex + 1);
        java.nio.file.Path jar = call.mac().resolve(jarPath);
        if (!java.nio.file.Files.isRegularFile(jar)) {
            return Result.fail(1, "Error: Unable to access jarfile " + jarPath + "\n");
        }
        if (!call.root() && !call.mac().fileOwners().mayRead(call.mac().sshUser(), jar)) {
            return Result.fail(1, "Error: Unable to access jarfile " + jarPath + "\n");
        }
        List<String> words = new java.util.ArrayList<>(List.of("java"));
        words.addAll(call.arguments());
        List<String> command = new java.util.ArrayList<>(Launchd.mapArguments(call.mac(), words));
        command.set(0, java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
        try {
            java.nio.file.Path output = java.nio.file.Files.createTempFile("simulated-java", ".out");
            java.nio.file.Path error = java.nio.file.Files.createTempFile("simulated-java", ".err");
            try {
                Process process = new ProcessBuilder(command).directory(call.mac().root().toFile())
                        .redirectOutput(output.toFile()).redirectError(error.toFile()).start();
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.MINUTES)) {
                    process.destroyForcibly();
                    return Result.fail(137, "java: killed after ten minutes\n");
                }
                // Paths of the host in what it prints are the Mac's again.
                String root = call.mac().root().toString();
                return new Result(java.nio.file.Files.readString(output).replace(root, ""), java.nio.file.Files.readString(error).replace(root, ""),
                        process.exitValue(), null);
            } finally {
                java.nio.file.Files.deleteIfExists(output);
                java.nio.file.Files.deleteIfExists(error);
            }
        } catch (java.io.IOException e) {
            return Result.fail(1, "java: " + e.getMessage() + "\n");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Result.fail(130, "java: interrupted\n");
        }
    }

    private static Result installer(Call call) {
        List<String> args = call.arguments();
        int pkg = args.indexOf("-pkg");
        int target = args.indexOf("-target");
        if (pkg < 0 || pkg + 1 >= args.size() || target < 0 || target + 1 >= args.size()) {
            return Result.fail(1, "Usage: installer [-pkg <pathToPackage>] [-target <[DomainKey|MountPoint]>]\n");
        }
        if (!call.root()) {
            return Result.fail(1, "installer: Must be run as root to install this package.\n");
        }
        String path = args.get(pkg + 1);
        if (!java.nio.file.Files.isRegularFile(call.mac().resolve(path))) {
            return Result.fail(1, "installer: Error - the package path specified was invalid: '" + path + "'.\n");
        }
        call.mac().installJava();
        String name = path.substring(path.lastIndexOf('/') + 1).replaceFirst("\\.pkg$", "");
        return Result.ok("installer: Package name is " + name + "\ninstaller: Installing at base path " + args.get(target + 1)
                + "\ninstaller: The install was successful.\n");
    }
}
