package io.macfleet.provision.extension;

import io.macfleet.provision.CheckResult;
import io.macfleet.provision.CommandSpec;
import io.macfleet.provision.MachineContext;
import io.macfleet.provision.StepDefinition;
import io.macfleet.provision.StepType;
import io.macfleet.ssh.CommandResult;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A step type that exists only in test code, in a package of its own (so it can use only the public extension
 * surface): {@code type: marker-file} writes a file once. Being a bean is all it takes to be usable in playbooks
 * run by the application's {@code ProvisioningService}.
 */
@Singleton
public class MarkerFileStepType implements StepType<MarkerFileStepType.Parameters> {

    public record Parameters(String path, String content) {
        public Parameters {
            if (path == null || !path.startsWith("/")) {
                throw new IllegalArgumentException("'path' is required: the absolute path of the marker file");
            }
            content = content == null ? "" : content;
        }
    }

    @Override
    public String name() {
        return "marker-file";
    }

    @Override
    public Class<Parameters> parameters() {
        return Parameters.class;
    }

    @Override
    public StepDefinition define(Parameters parameters, PlaybookFiles files) {
        return new StepDefinition() {
            @Override
            public CheckResult check(MachineContext context) {
                CommandResult test = context.execute(new CommandSpec(List.of("test", "-f", parameters.path()), false, null), true, false);
                return test.succeeded() ? CheckResult.satisfied(parameters.path() + " is there") : CheckResult.notSatisfied(parameters.path() + " is missing");
            }

            @Override
            public boolean hasAction() {
                return true;
            }

            @Override
            public String act(MachineContext context) {
                context.upload(parameters.path(), parameters.content().getBytes(StandardCharsets.UTF_8), 0644);
                return "wrote " + parameters.path();
            }
        };
    }
}
