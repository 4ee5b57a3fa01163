package io.macfleet.runtime;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.command.ExitCodes;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet node plan CLUSTER}: what {@code node deploy} would do, per Mac, changing nothing. */
@Command(name = "plan", mixinStandardHelpOptions = true,
        description = {"Print, per Mac, the launch daemons a deployment of CLUSTER's runtime would write (label, program arguments,"
                + " environment, ports, bind addresses, start order, readiness probe) and the files it would copy (with their SHA-256),"
                + " without connecting to any Mac. macfleet node deploy carries out exactly this plan."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:planned", "2:refused (the message says why: settings, memory, cabling)"})
public class RuntimePlanCommand implements Callable<Integer> {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "CLUSTER", description = "A cluster of the applied inventory.")
    String cluster;

    @Option(names = "--model", paramLabel = "FILE", description = "The model: a catalogue name or a GGUF file (default: the inventory's inference.model).")
    Path model;

    @Option(names = "--node-jar", paramLabel = "FILE", description = "The bundled node's jar (default: inference-node/target/inference-node-*.jar).")
    Path nodeJar;

    @Mixin
    JsonOption json;

    @Inject
    RuntimeService runtimes;

    @Inject
    io.macfleet.inventory.DesiredStateStore desiredState;

    @Inject
    io.macfleet.models.ModelCatalogue catalogue;

    @Inject
    io.macfleet.models.ModelFits fits;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        // A catalogue model is checked against the Macs' memory too (refused with the numbers, exit 2 as other refusals).
        Optional<String> named = Optional.ofNullable(model).map(Path::toString).or(() -> desiredState.cluster(cluster)
                .map(found -> found.inference() == null ? null : found.inference().model())).filter(name -> catalogue.find(name).isPresent());
        if (named.isPresent()) {
            try {
                fits.refuseWhenNotFitting(cluster, named.get());
            } catch (io.macfleet.models.ModelRefused doesNotFit) {
                throw new RuntimeRefused(doesNotFit.getMessage());
            }
        }
        RuntimePlan plan = runtimes.plan(cluster, Optional.ofNullable(model), Optional.ofNullable(nodeJar));
        out.print(json.on() ? JSON.writeValueAsString(RuntimePlans.body(plan)) + "\n" : RuntimePlans.text(plan));
        out.flush();
        return ExitCodes.OK;
    }
}
