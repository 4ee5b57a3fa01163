package io.macfleet.node.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The inference node's structure (docs/architecture.md): its packages form no cycle, and it never uses the control
 * plane. The node is deployed alone to every Mac as a JDK-only jar; a control-plane import would either fail there
 * or drag the control plane's dependencies onto the Macs.
 */
@AnalyzeClasses(packages = "io.macfleet", importOptions = {ImportOption.DoNotIncludeTests.class, ImportOption.DoNotIncludeJars.class})
class NodeArchitectureTest {

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices().matching("io.macfleet.(**)")
            .should().beFreeOfCycles()
            .because("a cycle makes packages one unit that can only be understood and changed together: move the type"
                    + " both sides need into the lower package (or a new small one beneath both, like node.http),"
                    + " or let the lower package define an interface that the upper one implements");

    @ArchTest
    static final ArchRule nodeNeverUsesTheControlPlane = noClasses().that().resideInAPackage("io.macfleet.node..")
            .should().dependOnClassesThat(
                    DescribedPredicate.describe("are in the control plane (io.macfleet but not io.macfleet.node)",
                            javaClass -> javaClass.getPackageName().startsWith("io.macfleet")
                                    && !javaClass.getPackageName().equals("io.macfleet.node")
                                    && !javaClass.getPackageName().startsWith("io.macfleet.node.")))
            .because("the node runs alone on every Mac from its JDK-only jar: what it needs from the control plane"
                    + " travels as data (options, files, HTTP), never as an import");

    @ArchTest
    static final ArchRule nodeUsesOnlyTheJdk = noClasses().that().resideInAPackage("io.macfleet.node..")
            .should().dependOnClassesThat().resideOutsideOfPackages("io.macfleet.node..", "java..", "javax..", "jdk..", "com.sun.net.httpserver..", "com.sun.management..", "sun..")
            .because("the node stays JDK-only at run time (no library on the Macs to install, update or audit):"
                    + " write the few lines yourself or add the library to the control plane instead");
}
