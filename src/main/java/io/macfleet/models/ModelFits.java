package io.macfleet.models;

import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link MemoryFit} for a cluster of the applied inventory: each Mac's memory from its latest facts
 * ({@code sysctl hw.memsize}), else the inventory's {@code memoryGb}; the context and slots from the cluster's
 * {@code inference.settings} ({@code context}, {@code parallel}, as llama.cpp names them), else
 * {@link #DEFAULT_CONTEXT} and one slot. The usable GPU memory is the facts' {@code iogpu.wired_limit_mb} when the Mac
 * sets it, else macOS's default share; each figure's answer names where it came from.
 */
@ApplicationScoped
public class ModelFits {

    public static final int DEFAULT_CONTEXT = 4096;

    private DesiredStateStore desiredState;
    private FactsService facts;
    private ModelCatalogue catalogue;

    protected ModelFits() {
    }

    @Inject
    public ModelFits(DesiredStateStore desiredState, FactsService facts, ModelCatalogue catalogue) {
        this.desiredState = desiredState;
        this.facts = facts;
        this.catalogue = catalogue;
    }

    public MemoryFit.Result fit(String clusterName, String modelName, Optional<Integer> context, Optional<Integer> slots) {
        Cluster cluster = desiredState.cluster(clusterName).orElseThrow(() -> new ModelRefused(ModelRefused.Reason.NOT_FOUND,
                "no cluster " + clusterName + " in the applied inventory"));
        CatalogueModel model = catalogue.find(modelName).orElseThrow(() -> new ModelRefused(ModelRefused.Reason.NOT_FOUND,
                "no model " + modelName + " in the catalogue (macfleet model list)"));
        List<Machine> machines = desiredState.machines(clusterName);
        Map<String, FactsObservation> observed = facts.latest(machines.stream().map(Machine::name).toList());
        List<MemoryFit.Mac> macs = machines.stream().map(machine -> mac(machine, Optional.ofNullable(observed.get(machine.name())))).toList();
        Map<String, Object> settings = cluster.inference() == null ? Map.of() : cluster.inference().settings();
        MemoryFit.Settings runtime = new MemoryFit.Settings(context.orElse(number(settings.get("context"), DEFAULT_CONTEXT)),
                slots.orElse(number(settings.get("parallel"), 1)));
        return MemoryFit.check(model, catalogue.shape(modelName), clusterName, macs, runtime);
    }

    /** Refuses with the numbers when the model does not fit the cluster. */
    public MemoryFit.Result requireFit(String clusterName, String modelName) {
        MemoryFit.Result result = fit(clusterName, modelName, Optional.empty(), Optional.empty());
        if (!result.fits()) {
            throw new ModelRefused(ModelRefused.Reason.DOES_NOT_FIT, result.message());
        }
        return result;
    }

    /**
     * For the deploy: refuses with the numbers when the model does not fit; says nothing when the Macs' memory is not
     * known (no facts, no memoryGb), since the deploy's own checks then decide as before.
     */
    public void refuseWhenNotFitting(String clusterName, String modelName) {
        MemoryFit.Result result;
        try {
            result = fit(clusterName, modelName, Optional.empty(), Optional.empty());
        } catch (ModelRefused unknown) {
            return;
        }
        if (!result.fits()) {
            throw new ModelRefused(ModelRefused.Reason.DOES_NOT_FIT, result.message());
        }
    }

    private static MemoryFit.Mac mac(Machine machine, Optional<FactsObservation> observation) {
        long gathered = observation.map(observed -> observed.facts().memoryBytes()).orElse(0L);
        Long wiredLimit = observation.map(FactsObservation::wiredLimitMegabytes).filter(java.util.OptionalLong::isPresent)
                .map(java.util.OptionalLong::getAsLong).orElse(null);
        if (gathered > 0) {
            return new MemoryFit.Mac(machine.name(), gathered, "hw.memsize", wiredLimit);
        }
        return machine.memoryGb() == null ? new MemoryFit.Mac(machine.name(), 0L, null, wiredLimit)
                : new MemoryFit.Mac(machine.name(), machine.memoryGb() * (1L << 30), "the inventory's memoryGb", wiredLimit);
    }

    private static int number(Object value, int otherwise) {
        return value instanceof Number number && number.intValue() > 0 ? number.intValue() : otherwise;
    }
}
