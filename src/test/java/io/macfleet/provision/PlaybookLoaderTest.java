package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Playbooks are validated at load: every broken one names file, line and column and what is expected. */
class PlaybookLoaderTest {

    @TempDir
    Path directory;

    @Test
    void theShippedPlaybooksAreValid() {
        assertThat(PlaybookLoader.validate(Path.of("playbooks"))).isEmpty();
        Playbook provision = PlaybookLoader.resolve("provision", Path.of("playbooks"));
        assertThat(provision.steps()).extracting(PlaybookStep::name).containsExactly("reachable", "facts", "power-settings", "sshd-drop-in",
                "ssh-hardened", "thunderbolt-bridge-off", "bootstrap-token-escrowed", "rdma-enabled", "cabling");
        assertThat(provision.step("cabling").orElseThrow().scope()).isEqualTo(PlaybookStep.Scope.CLUSTER);
        assertThat(PlaybookLoader.resolve("deploy-node", Path.of("playbooks")).step("inference-node").orElseThrow().scope())
                .isEqualTo(PlaybookStep.Scope.CLUSTER);
        assertThat(provision.contentHash()).hasSize(64);
        // The copies in the jar (class path) are the same playbooks.
        assertThat(PlaybookLoader.resolve("rdma-enable", null).source()).isEqualTo("playbooks/rdma-enable.yaml");
        assertThat(PlaybookLoader.resolve("bootstrap-token", null).steps()).hasSize(2);
        assertThat(provision.select(null, "rdma-enabled")).extracting(PlaybookStep::name).containsExactly("rdma-enabled", "cabling");
        assertThat(provision.select("facts", null)).extracting(PlaybookStep::name).containsExactly("facts");
    }

    @Test
    void aYamlSyntaxErrorNamesItsLine() throws IOException {
        assertProblems("""
                name: broken
                steps:
                  - name: a
                    type: command
                    params: {check: {argv: [whoami]}
                """, "broken.yaml:6:1: malformed YAML");
    }

    @Test
    void anUnknownStepTypeIsAnErrorReservedOnesSayWhenTheyArriveAndTheNodeStepChecksItsParameters() throws IOException {
        assertProblems("""
                steps:
                  - name: a
                    type: shell
                    params: {}
                  - name: b
                    type: mdm
                  - name: c
                    type: inference-node
                    params: {model: "https://models.example/tiny.gguf"}
                """, "broken.yaml:3:5: unknown step type 'shell'; expected one of command, facts, reboot, operator, cabling, template, thunderbolt-network, inference-node",
                "broken.yaml:6:5: step type 'mdm' is not available yet: it arrives with the MDM integration issue",
                "broken.yaml:9:5: params: 'modelSha256' is required when 'model' is a URL (https://models.example/tiny.gguf)");
    }

    @Test
    void unknownAndMissingParametersAreErrorsAtTheirLine() throws IOException {
        assertProblems("""
                steps:
                  - name: power
                    type: command
                    params:
                      check:
                        argv: [/usr/bin/pmset, -g]
                        outputMatch: ["sleep 0"]
                  - name: wait
                    type: operator
                    params:
                      title: Enable RDMA
                      expect: enabled
                  - name: bad-sudo
                    type: command
                    params:
                      check:
                        argv: [rm, -rf, /]
                        privileged: true
                  - name: reboot
                    type: reboot
                    params: {timeoutSeconds: soon}
                """,
                "broken.yaml:7:9: unknown parameter 'outputMatch' of step type command; expected one of argv, exitCode, explain, outputDoesNotMatch, outputMatches, privileged, timeoutSeconds",
                "broken.yaml:10:5: params: 'instructions' is required: the numbered steps a person follows",
                "broken.yaml:16:7: params.check: privileged program rm is not on the sudo allow-list; expected one of [/bin/launchctl,",
                "broken.yaml:21:14: params.timeoutSeconds: Cannot coerce String value (\"soon\") to a whole number value");
    }

    @Test
    void theSchemaChecksTheShapeOfSteps() throws IOException {
        assertProblems("""
                steps:
                  - name: Not_A_Name
                    type: command
                    colour: red
                  - type: facts
                    when: {fact: rdmaEnabled}
                """, "broken.yaml:2:5: steps[0].name: does not match the regex pattern ^[a-z0-9][a-z0-9-]{0,62}$",
                "broken.yaml:4:5: steps[0]: unknown key 'colour'; expected only the keys the playbook schema defines",
                "broken.yaml:5:5: steps[1]: required property 'name' not found",
                "broken.yaml:6:5: steps[1].when: required property 'equals' not found");
    }

    @Test
    void conditionsScopesAndPlaceholdersAreChecked() throws IOException {
        assertProblems("""
                steps:
                  - name: a
                    type: command
                    when: {fact: colour, equals: red}
                    params: {check: {argv: [whoami]}}
                  - name: b
                    type: command
                    scope: cluster
                    params: {check: {argv: [whoami]}}
                  - name: c
                    type: command
                    params: {check: {argv: [echo, "{{ inventory.name }}"]}}
                  - name: c
                    type: facts
                  - name: d
                    type: command
                    params: {check: {argv: [echo, "{{ secret machine.volumeOwner.password or 'none' }}"]}}
                """, "broken.yaml:4:12: unknown fact 'colour' in when; expected one of",
                "broken.yaml:8:5: step type command has scope machine, not cluster (only cabling, inference-node act on a whole cluster)",
                "broken.yaml:12:14: params.check: unknown placeholder root 'inventory' in '{{ inventory.name }}'; expected one of [machine, cluster, facts, vars]",
                "broken.yaml:13:5: duplicate step name 'c'; expected unique step names",
                "a secret has no fallback: '{{ secret machine.volumeOwner.password or 'none' }}'");
    }

    @Test
    void aSecretIsRefusedAsAnArgumentAndAcceptedOnStandardInput() throws IOException {
        // Every local user of a Mac sees every process's arguments with ps: a secret must never be one.
        assertProblems("""
                name: broken
                steps:
                  - name: escrow
                    type: command
                    params:
                      check: {argv: [/usr/bin/true]}
                      action:
                        - argv: [/usr/bin/profiles, install, -password, "{{ secret machine.volumeOwner.password }}"]
                """, "a secret cannot be a command-line argument (every local user of the Mac sees arguments with ps); send it on standard input",
                "found in argv word '{{ secret machine.volumeOwner.password }}'");
        Path file = directory.resolve("stdin.yaml");
        Files.writeString(file, """
                name: fine
                steps:
                  - name: escrow
                    type: command
                    params:
                      check: {argv: [/usr/bin/true]}
                      action:
                        - argv: [/usr/bin/expect, -c, "gets stdin password"]
                          stdin: ["{{ secret machine.volumeOwner.password }}"]
                """);
        assertThat(PlaybookLoader.load(file).steps()).hasSize(1);
    }

    private void assertProblems(String yaml, String... expected) throws IOException {
        Path file = directory.resolve("broken.yaml");
        Files.writeString(file, yaml);
        List<PlaybookLoader.Problem> problems = PlaybookLoader.validate(file);
        List<String> lines = problems.stream().map(problem -> problem.toString().replace(directory + "/", "")).toList();
        for (String text : expected) {
            assertThat(lines).as("problems of\n" + yaml).anySatisfy(line -> assertThat(line).contains(text));
        }
        assertThatThrownBy(() -> PlaybookLoader.load(file)).isInstanceOf(PlaybookLoader.InvalidPlaybookException.class)
                .hasMessageContaining(file + ":");
    }
}
