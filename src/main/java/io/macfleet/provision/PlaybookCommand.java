package io.macfleet.provision;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet playbook validate FILE|DIR} (the same as {@code provision validate}). */
@Command(name = "playbook", mixinStandardHelpOptions = true, description = "Provisioning playbooks.",
        subcommands = {PlaybookCommand.Validate.class})
public class PlaybookCommand {

    @Command(name = "validate", mixinStandardHelpOptions = true, description = "Check a playbook file, or every *.yaml of a directory.",
            exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:valid", "1:errors (listed as file:line:column: message)"})
    static class Validate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "FILE|DIR")
        Path path;

        @Override
        public Integer call() {
            return ProvisionCommand.validate(path, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }
}
