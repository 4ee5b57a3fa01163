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
        return Result.fail(1, "java: the simulator answers java -version only\n");
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
