package io.macfleet.architecture;

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

/**
 * The control plane's layers and rules, as written in docs/architecture.md: front (CLI, console, REST plumbing,
 * demo) over views (fleet-wide read models and metrics) over workflows over features over transport over core, the simulator beside them using core and transport
 * only, and no cycle between any two packages. A failure names the offending class and line; the {@code because}
 * text says what to do instead. Only production classes are checked: tests may wire anything to anything.
 */
@AnalyzeClasses(packages = "io.macfleet", importOptions = {ImportOption.DoNotIncludeTests.class, ImportOption.DoNotIncludeJars.class})
class ArchitectureTest {

    static final String FRONT = "Front";
    static final String VIEWS = "Views";
    static final String WORKFLOWS = "Workflows";
    static final String FEATURES = "Features";
    static final String CORE = "Core";
    static final String TRANSPORT = "Transport";
    static final String SIMULATOR = "Simulator";

    static final String[] FRONT_PACKAGES = {"io.macfleet.cli..", "io.macfleet.console..", "io.macfleet.api..",
            "io.macfleet.demo..", "io.macfleet.simulator.api.."};
    /**
     * Read models and metrics that look across the whole fleet (the fleet status, observation and its metrics, the
     * inference metrics scraped from the runtimes): they read workflows and features alike, and only the front reads
     * them, so they sit between the two.
     */
    static final String[] VIEW_PACKAGES = {"io.macfleet.fleet..", "io.macfleet.observe..", "io.macfleet.inference.."};
    static final String[] WORKFLOW_PACKAGES = {"io.macfleet.provision..", "io.macfleet.osupdate..",
            "io.macfleet.supervision..", "io.macfleet.deployment..", "io.macfleet.runtime..", "io.macfleet.models.placement.."};
    static final String[] FEATURE_PACKAGES = {"io.macfleet.accounts..", "io.macfleet.cabling..", "io.macfleet.facts..",
            "io.macfleet.health..", "io.macfleet.charts..", "io.macfleet.mdm",
            "io.macfleet.mdm.status..", "io.macfleet.models", "io.macfleet.lease.."};
    static final String[] CORE_PACKAGES = {"io.macfleet.inventory..", "io.macfleet.config..", "io.macfleet.database..",
            "io.macfleet.secrets..", "io.macfleet.audit..", "io.macfleet.command..", "io.macfleet.lifecycle..",
            "io.macfleet.problem.."};
    static final String[] TRANSPORT_PACKAGES = {"io.macfleet.ssh..", "io.macfleet.reach..", "io.macfleet.mdm.nanohub.."};
    static final String[] SIMULATOR_PACKAGES = {"io.macfleet.simulator", "io.macfleet.simulator.mdm.."};

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices().matching("io.macfleet.(**)")
            .should().beFreeOfCycles()
            .because("packages in a cycle can only be understood, tested and changed together: move the type both"
                    + " sides need down into the lower package (or core), let the lower package define an interface or"
                    + " registry that the upper one fills, or publish an event (docs/architecture.md)");

    @ArchTest
    static final ArchRule layersAreRespected = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .withOptionalLayers(true)
            .layer(FRONT).definedBy(FRONT_PACKAGES)
            .layer(VIEWS).definedBy(VIEW_PACKAGES)
            .layer(WORKFLOWS).definedBy(WORKFLOW_PACKAGES)
            .layer(FEATURES).definedBy(FEATURE_PACKAGES)
            .layer(CORE).definedBy(CORE_PACKAGES)
            .layer(TRANSPORT).definedBy(TRANSPORT_PACKAGES)
            .layer(SIMULATOR).definedBy(SIMULATOR_PACKAGES)
            .whereLayer(FRONT).mayNotBeAccessedByAnyLayer()
            .whereLayer(VIEWS).mayOnlyAccessLayers(VIEWS, WORKFLOWS, FEATURES, CORE, TRANSPORT)
            .whereLayer(WORKFLOWS).mayOnlyAccessLayers(WORKFLOWS, FEATURES, CORE, TRANSPORT)
            .whereLayer(FEATURES).mayOnlyAccessLayers(FEATURES, CORE, TRANSPORT)
            .whereLayer(TRANSPORT).mayOnlyAccessLayers(TRANSPORT, CORE)
            .whereLayer(CORE).mayOnlyAccessLayers(CORE)
            .whereLayer(SIMULATOR).mayOnlyAccessLayers(SIMULATOR, CORE, TRANSPORT)
            // mdm.nanohub is the transport that implements the mdm feature's adapter contract (MdmAdapter and the MDM
            // records it speaks); mdm finds it through META-INF/services, never by name, so the edge is one-way.
            .ignoreDependency(resideInAPackage("io.macfleet.mdm.nanohub"), resideInAPackage("io.macfleet.mdm"))
            .because("a package may use its own layer and the layers below it, never above (front > views > workflows >"
                    + " features > transport > core; the simulator uses core and transport only): move the shared type"
                    + " down, or turn the upward call into an extension point or event (docs/architecture.md)");

    @ArchTest
    static final ArchRule everyPackageHasALayer = classes().should()
            .resideInAnyPackage(concat(FRONT_PACKAGES, VIEW_PACKAGES, WORKFLOW_PACKAGES, FEATURE_PACKAGES, CORE_PACKAGES, TRANSPORT_PACKAGES, SIMULATOR_PACKAGES))
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

    private static ArchRule simulatorRule(String simulatorPackage) {
        return noClasses().that().resideInAPackage(simulatorPackage)
                .should().dependOnClassesThat(resideInAnyPackage(concat(VIEW_PACKAGES, FEATURE_PACKAGES, WORKFLOW_PACKAGES)))
                .because("the simulator stands in for Macs and must not agree with a product bug by sharing the"
                        + " product's code: give it its own model of what it needs (as it has for programs), and let"
                        + " only demo and tests wire it to the product");
    }

    private static String[] concat(String[]... groups) {
        return java.util.Arrays.stream(groups).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }
}
