package io.macfleet.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceRule;
import java.util.List;

/**
 * The control plane's layers and rules, as written in docs/architecture.md: front (CLI, console, REST plumbing,
 * demo) over workflows over features over transport over core, the simulator beside them using core and transport
 * only, and no cycle between any two packages. A failure names the offending class and line; the {@code because}
 * text says what to do instead. Only production classes are checked: tests may wire anything to anything.
 */
@AnalyzeClasses(packages = "io.macfleet", importOptions = {ImportOption.DoNotIncludeTests.class, ImportOption.DoNotIncludeJars.class})
class ArchitectureTest {

    static final String FRONT = "Front";
    static final String WORKFLOWS = "Workflows";
    static final String FEATURES = "Features";
    static final String CORE = "Core";
    static final String TRANSPORT = "Transport";
    static final String SIMULATOR = "Simulator";

    static final String[] FRONT_PACKAGES = {"io.macfleet.cli..", "io.macfleet.console..", "io.macfleet.api..",
            "io.macfleet.demo..", "io.macfleet.simulator.api..", "io.macfleet.simulator.demo.."};
    static final String[] WORKFLOW_PACKAGES = {"io.macfleet.provision..", "io.macfleet.osupdate..",
            "io.macfleet.supervision..", "io.macfleet.deployment..", "io.macfleet.runtime..", "io.macfleet.models.placement.."};
    static final String[] FEATURE_PACKAGES = {"io.macfleet.accounts..", "io.macfleet.cabling..", "io.macfleet.facts..",
            "io.macfleet.observe..", "io.macfleet.health..", "io.macfleet.charts..", "io.macfleet.mdm",
            "io.macfleet.mdm.status..", "io.macfleet.models", "io.macfleet.inference..", "io.macfleet.lease..",
            "io.macfleet.fleet.."};
    static final String[] CORE_PACKAGES = {"io.macfleet.inventory..", "io.macfleet.config..", "io.macfleet.database..",
            "io.macfleet.secrets..", "io.macfleet.audit..", "io.macfleet.command..", "io.macfleet.lifecycle..",
            "io.macfleet.problem.."};
    static final String[] TRANSPORT_PACKAGES = {"io.macfleet.ssh..", "io.macfleet.reach..", "io.macfleet.mdm.nanohub.."};
    static final String[] SIMULATOR_PACKAGES = {"io.macfleet.simulator", "io.macfleet.simulator.mdm.."};

    /**
     * TEMPORARY until branch arch-features is merged; the integrator removes this.
     * The dependencies (origin package, target package, exact packages) that branch arch-features removes: what is
     * left of the cycle {cabling, console, deployment, facts, observe, osupdate, provision, runtime, simulator,
     * supervision, models} and the simulator/demo/runtime/fleet layer violations. Nothing else may be added here.
     */
    static final List<Dependency> TEMPORARY_UNTIL_ARCH_FEATURES = List.of(
            new Dependency("io.macfleet.facts", "io.macfleet.observe"),           // FactsService
            new Dependency("io.macfleet.observe", "io.macfleet.console"),         // FleetMetrics, ObservationResource: the fleet package
            new Dependency("io.macfleet.observe", "io.macfleet.provision"),       // FleetMetrics: the fleet package
            new Dependency("io.macfleet.provision", "io.macfleet.deployment"),    // StepTypes.BUILT_IN
            new Dependency("io.macfleet.deployment", "io.macfleet.runtime"),      // NodeCommand, NodeResource
            new Dependency("io.macfleet.runtime", "io.macfleet.supervision"),     // BundledRuntime
            new Dependency("io.macfleet.runtime", "io.macfleet.simulator"),       // DemoLlamaCpp, DemoMlx: the demo package
            new Dependency("io.macfleet.simulator", "io.macfleet.cabling"),       // SimulatedFleet: its own cabling model
            new Dependency("io.macfleet.simulator", "io.macfleet.deployment"),    // MlxPythonProgram
            new Dependency("io.macfleet.simulator", "io.macfleet.runtime"),       // MlxServerStandIn
            new Dependency("io.macfleet.inference", "io.macfleet.runtime"),       // InferenceMetrics, InferenceScraper
            new Dependency("io.macfleet.inference", "io.macfleet.deployment"),    // InferenceScraper
            new Dependency("io.macfleet.models", "io.macfleet.models.placement")); // ModelCommand's picocli subcommands

    record Dependency(String originPackage, String targetPackage) {
    }

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = withTemporaryExceptions(slices().matching("io.macfleet.(**)")
            .should().beFreeOfCycles())
            .because("packages in a cycle can only be understood, tested and changed together: move the type both"
                    + " sides need down into the lower package (or core), let the lower package define an interface or"
                    + " registry that the upper one fills, or publish an event (docs/architecture.md)");

    @ArchTest
    static final ArchRule layersAreRespected = withTemporaryExceptions(layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .withOptionalLayers(true)
            .layer(FRONT).definedBy(FRONT_PACKAGES)
            .layer(WORKFLOWS).definedBy(WORKFLOW_PACKAGES)
            .layer(FEATURES).definedBy(FEATURE_PACKAGES)
            .layer(CORE).definedBy(CORE_PACKAGES)
            .layer(TRANSPORT).definedBy(TRANSPORT_PACKAGES)
            .layer(SIMULATOR).definedBy(SIMULATOR_PACKAGES)
            .whereLayer(FRONT).mayNotBeAccessedByAnyLayer()
            .whereLayer(WORKFLOWS).mayOnlyAccessLayers(WORKFLOWS, FEATURES, CORE, TRANSPORT)
            .whereLayer(FEATURES).mayOnlyAccessLayers(FEATURES, CORE, TRANSPORT)
            .whereLayer(TRANSPORT).mayOnlyAccessLayers(TRANSPORT, CORE)
            .whereLayer(CORE).mayOnlyAccessLayers(CORE)
            .whereLayer(SIMULATOR).mayOnlyAccessLayers(SIMULATOR, CORE, TRANSPORT)
            // mdm.nanohub is the transport that implements the mdm feature's adapter contract (MdmAdapter and the MDM
            // records it speaks); mdm finds it through META-INF/services, never by name, so the edge is one-way.
            .ignoreDependency(resideInAPackage("io.macfleet.mdm.nanohub"), resideInAPackage("io.macfleet.mdm")))
            .because("a package may use its own layer and the layers below it, never above (front > workflows >"
                    + " features > transport > core; the simulator uses core and transport only): move the shared type"
                    + " down, or turn the upward call into an extension point or event (docs/architecture.md)");

    @ArchTest
    static final ArchRule everyPackageHasALayer = classes().should()
            .resideInAnyPackage(concat(FRONT_PACKAGES, WORKFLOW_PACKAGES, FEATURE_PACKAGES, CORE_PACKAGES, TRANSPORT_PACKAGES, SIMULATOR_PACKAGES))
            .because("a new package must be placed in a layer: add it to the right list in ArchitectureTest and to"
                    + " docs/architecture.md, so the layer rules cover it");

    @ArchTest
    static final ArchRule simulatorNeverUsesProductFeaturesOrWorkflows = CompositeArchRule
            .of(simulatorRule("io.macfleet.simulator")).and(simulatorRule("io.macfleet.simulator.mdm.."));

    @ArchTest
    static final ArchRule onlyFrontUsesRestPlumbing = noClasses()
            .that().resideOutsideOfPackages(FRONT_PACKAGES)
            .should().dependOnClassesThat().resideInAPackage("io.macfleet.api..")
            .because("api is REST plumbing (filters, exception mappers): a feature's resource throws"
                    + " io.macfleet.problem.ProblemException and returns typed records instead");

    private static SliceRule withTemporaryExceptions(SliceRule rule) {
        SliceRule result = rule;
        for (Dependency dependency : TEMPORARY_UNTIL_ARCH_FEATURES) {
            result = result.ignoreDependency(resideInAPackage(dependency.originPackage()), resideInAPackage(dependency.targetPackage()));
        }
        return result;
    }

    private static LayeredArchitecture withTemporaryExceptions(LayeredArchitecture rule) {
        LayeredArchitecture result = rule;
        for (Dependency dependency : TEMPORARY_UNTIL_ARCH_FEATURES) {
            result = result.ignoreDependency(resideInAPackage(dependency.originPackage()), resideInAPackage(dependency.targetPackage()));
        }
        return result;
    }

    private static ArchRule simulatorRule(String simulatorPackage) {
        String[] allowedForNow = TEMPORARY_UNTIL_ARCH_FEATURES.stream()
                .filter(dependency -> dependency.originPackage().equals(simulatorPackage))
                .map(Dependency::targetPackage).toArray(String[]::new);
        return noClasses().that().resideInAPackage(simulatorPackage)
                .should().dependOnClassesThat(resideInAnyPackage(concat(FEATURE_PACKAGES, WORKFLOW_PACKAGES))
                        .and(not(resideInAnyPackage(allowedForNow))))
                .because("the simulator stands in for Macs and must not agree with a product bug by sharing the"
                        + " product's code: give it its own model of what it needs (as it has for programs), and let"
                        + " only demo and tests wire it to the product");
    }

    private static String[] concat(String[]... groups) {
        return java.util.Arrays.stream(groups).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }
}
