package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A step type registered from test code alone ({@code extension.MarkerFileStepType}, a test-scope bean) is found by the
 * application's registry and runs from a playbook against the simulator: planned, done, planned again as done, and its
 * parameters validated with file:line:column like the built-in ones.
 */
@QuarkusTest
class StepTypeExtensionTest {

    static ProvisioningFixture fixture;

    @Inject
    DesiredStateStore store;

    @Inject
    ProvisioningService service;

    @Inject
    StepTypes stepTypes;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-step-extension"), 2, "127.0.0.131");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void theBeansAreTheBuiltInStepTypesAndTheTestOne() {
        List<String> expected = new ArrayList<>(StepTypes.builtIn().names());
        expected.add("marker-file");
        assertThat(stepTypes.names()).containsExactlyElementsOf(expected);
    }

    @Test
    void aPlaybookUsesTheTestStepTypeOnSimulatedMachines() throws Exception {
        store.apply(InventoryLoader.load(fixture.inventory).inventory(), "extension-test", fixture.inventory.toString());
        Path playbook = fixture.directory.resolve("marker.yaml");
        Files.writeString(playbook, """
                name: marker
                steps:
                  - name: reachable
                    type: command
                    params:
                      check: { argv: [hostname], explain: "the machine answers" }
                  - name: marker
                    type: marker-file
                    params:
                      path: /tmp/macfleet-marker
                      content: "provisioned\\n"
                """);
        ProvisioningService.Request request = new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), playbook.toString(),
                null, null, false, null);

        ProvisioningService.Plan before = service.plan(request);
        assertThat(before.machines()).hasSize(2).allSatisfy(machine -> assertThat(machine.steps().get(1))
                .isEqualTo(new ProvisioningService.PlannedStep("marker", "marker-file", "machine", "would-run", "/tmp/macfleet-marker is missing")));

        RunOutcome outcome = service.start(request, "extension-test", new ProvisioningListener() { });
        assertThat(outcome.status()).as(outcome.messages().toString()).isEqualTo("succeeded");
        assertThat(service.run(outcome.runId()).orElseThrow().steps()).filteredOn(step -> step.step().equals("marker"))
                .hasSize(2).allSatisfy(step -> {
                    assertThat(step.status()).isEqualTo("done");
                    assertThat(step.summary()).isEqualTo("wrote /tmp/macfleet-marker");
                });

        ProvisioningService.Plan after = service.plan(request);
        assertThat(after.machines()).allSatisfy(machine -> assertThat(machine.steps().get(1).verdict()).isEqualTo("already-done"));
    }

    @Test
    void theTestStepTypesParametersAreValidatedWithFileLineAndColumn() throws Exception {
        Path playbook = Files.createTempDirectory("macfleet-step-extension").resolve("broken.yaml");
        Files.writeString(playbook, """
                steps:
                  - name: marker
                    type: marker-file
                    params:
                      path: /tmp/x
                      size: 3
                  - name: relative
                    type: marker-file
                    params:
                      path: tmp/x
                """);
        assertThatThrownBy(() -> PlaybookLoader.load(playbook, stepTypes)).isInstanceOf(PlaybookLoader.InvalidPlaybookException.class)
                .hasMessage(playbook + ":6:7: unknown parameter 'size' of step type marker-file; expected one of content, path\n"
                        + playbook + ":9:5: params: 'path' is required: the absolute path of the marker file");
        // Without the registry of the application, the test step type is unknown: it is registered nowhere else.
        assertThatThrownBy(() -> PlaybookLoader.load(playbook)).hasMessageContaining("unknown step type 'marker-file'; expected one of "
                + "command, facts, reboot, operator, cabling, template");
    }
}
