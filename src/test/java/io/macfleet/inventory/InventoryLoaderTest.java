package io.macfleet.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.secrets.SecretReference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InventoryLoaderTest {

    @TempDir
    Path directory;

    private static final String FLEET = """
            defaults:
              ssh:
                user: admin
                privateKey: file:~/.ssh/macfleet_ed25519
              model: Mac15,14
            groups:
              big:
                memoryGb: 512
                ssh:
                  user: ops
              small:
                memoryGb: 256
            """;

    private static final String CLUSTERS = """
            clusters:
              - name: llm-a
                macosVersion: "26.2"
            """;

    private static final String MACHINES = """
            machines:
              - name: studio-[01-02]
                address: 10.0.0.[1-2]
                cluster: llm-a
                groups: [big]
            """;

    private void write(String file, String text) throws IOException {
        Path path = directory.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, text);
    }

    private LoadResult loadWith(String file, String text) throws IOException {
        // Files a test wrote before are kept: each test breaks one thing of an otherwise valid inventory.
        for (String[] base : new String[][] {{"fleet.yaml", FLEET}, {"clusters.yaml", CLUSTERS}, {"machines.yaml", MACHINES}}) {
            if (!Files.exists(directory.resolve(base[0]))) {
                write(base[0], base[1]);
            }
        }
        write(file, text);
        return InventoryLoader.load(directory);
    }

    private List<String> errorsOf(LoadResult result) {
        assertThat(result.valid()).as("expected errors").isFalse();
        return result.errors().stream().map(error -> directory.relativize(error.file()) + ":" + error.line() + ":"
                + error.column() + ": " + error.message()).toList();
    }

    @Test
    void theBaseInventoryIsValid() throws IOException {
        LoadResult result = loadWith("extra.yaml", "");
        assertThat(result.errors()).isEmpty();
        assertThat(result.inventory().machines()).extracting(Machine::name).containsExactly("studio-01", "studio-02");
    }

    @Test
    void theShippedExampleIsValidWithFourStudiosInOneCluster() throws Exception {
        for (String name : List.of("fleet.yaml", "clusters.yaml", "machines.yaml")) {
            try (var in = getClass().getClassLoader().getResourceAsStream("examples/inventory/" + name)) {
                Files.write(directory.resolve(name), in.readAllBytes());
            }
        }
        LoadResult result = InventoryLoader.load(directory);
        assertThat(result.errors()).isEmpty();
        Inventory inventory = result.inventory();
        assertThat(inventory.machines()).extracting(Machine::name, Machine::address, Machine::memoryGb, Machine::model)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("studio-01", "192.168.50.11", 512, "Mac15,14"),
                        org.assertj.core.groups.Tuple.tuple("studio-02", "192.168.50.12", 512, "Mac15,14"),
                        org.assertj.core.groups.Tuple.tuple("studio-03", "192.168.50.13", 256, "Mac15,14"),
                        org.assertj.core.groups.Tuple.tuple("studio-04", "192.168.50.14", 256, "Mac15,14"));
        Cluster cluster = inventory.cluster("llm-a").orElseThrow();
        assertThat(cluster.macosVersion()).isEqualTo("26.2");
        assertThat(cluster.topology().kind()).isEqualTo(Topology.Kind.FULL_MESH);
        assertThat(cluster.topology().links()).hasSize(6);
        assertThat(cluster.inference().parallelism()).isEqualTo(InferenceSettings.Parallelism.TENSOR);
        assertThat(inventory.machine("studio-01").orElseThrow().role()).isEqualTo(Machine.Role.COORDINATOR);
    }

    @Test
    void aClusterMayLetTheSupervisionRebootItAfterAnRdmaFailureAndTheStoredDocumentKeepsIt() throws IOException {
        LoadResult result = loadWith("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.2"
                    supervision:
                      rdmaFailure: reboot
                """);
        assertThat(result.errors()).isEmpty();
        Cluster cluster = result.inventory().clusters().getFirst();
        assertThat(cluster.supervision()).isEqualTo(new ClusterSupervision(true));
        com.fasterxml.jackson.databind.JsonNode stored = new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(InventoryDocuments.of(cluster));
        assertThat(InventoryDocuments.cluster(stored).supervision()).isEqualTo(new ClusterSupervision(true));
        assertThat(errorsOf(loadWith("clusters.yaml", CLUSTERS.replace("\"26.2\"", "\"26.2\"\n    supervision:\n      rdmaFailure: always"))))
                .singleElement().asString().contains("clusters.yaml").contains("rdmaFailure");
    }

    @Test
    void theDefaultSupervisionOnlyRecommendsTheReboot() throws IOException {
        assertThat(loadWith("extra.yaml", "").inventory().clusters().getFirst().supervision()).isEqualTo(ClusterSupervision.DEFAULT);
    }

    @Test
    void rangesExpandKeepingZeroPaddingWithAddressesAlongside() throws IOException {
        LoadResult result = loadWith("machines.yaml", """
                machines:
                  - name: studio-[08-11]
                    address: 192.168.50.[98-101]
                    cluster: llm-a
                """);
        assertThat(result.errors()).isEmpty();
        assertThat(result.inventory().machines()).extracting(Machine::name, Machine::address).containsExactly(
                org.assertj.core.groups.Tuple.tuple("studio-08", "192.168.50.98"),
                org.assertj.core.groups.Tuple.tuple("studio-09", "192.168.50.99"),
                org.assertj.core.groups.Tuple.tuple("studio-10", "192.168.50.100"),
                org.assertj.core.groups.Tuple.tuple("studio-11", "192.168.50.101"));
    }

    @Test
    void defaultsThenGroupsInOrderThenTheMachineWin() throws IOException {
        LoadResult result = loadWith("machines.yaml", """
                machines:
                  - name: studio-01
                    address: 10.0.0.1
                    cluster: llm-a
                    groups: [big, small]
                  - name: studio-02
                    address: 10.0.0.2
                    cluster: llm-a
                    groups: [small, big]
                    ssh:
                      port: 2222
                    memoryGb: 128
                """);
        assertThat(result.errors()).isEmpty();
        Machine first = result.inventory().machine("studio-01").orElseThrow();
        assertThat(first.memoryGb()).isEqualTo(256);
        assertThat(first.ssh().user()).isEqualTo("ops");
        assertThat(first.ssh().port()).isEqualTo(22);
        assertThat(first.ssh().privateKey()).isEqualTo(SecretReference.of("file:~/.ssh/macfleet_ed25519"));
        assertThat(first.model()).isEqualTo("Mac15,14");
        assertThat(first.groups()).containsExactly("big", "small");
        Machine second = result.inventory().machine("studio-02").orElseThrow();
        assertThat(second.memoryGb()).isEqualTo(128);
        assertThat(second.ssh().port()).isEqualTo(2222);
        assertThat(second.ssh().user()).isEqualTo("ops");
    }

    @Test
    void malformedYamlIsPositioned() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-01
                    address: [10.0.0.1
                """))).singleElement().asString().startsWith("machines.yaml:4:1: malformed YAML:");
    }

    @Test
    void duplicateKeysAreErrors() throws IOException {
        assertThat(errorsOf(loadWith("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.2"
                    name: llm-b
                """))).containsExactly("clusters.yaml:4:5: duplicate key 'name' (first at line 2); expected each key once per mapping");
    }

    @Test
    void schemaErrorsArePositionedAtTheOffendingValueOrKey() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-01
                    address: 10.0.0.1
                    cluster: llm-a
                    ssh:
                      port: twenty-two
                    colour: blue
                  - address: 10.0.0.2
                    cluster: llm-a
                """))).containsExactly(
                "clusters.yaml:2:5: full-mesh cluster 'llm-a' has 1 machine(s); expected 2 to 6 (a Thunderbolt 5 full mesh; "
                        + "other sizes need topology kind explicit with links)",
                "machines.yaml:6:7: machines[0].ssh.port: string found, integer expected",
                "machines.yaml:7:5: machines[0]: unknown key 'colour'; expected only the keys the inventory schema defines",
                "machines.yaml:8:5: machines[1]: required property 'name' not found");
    }

    @Test
    void anUnquotedMacosVersionGetsAHint() throws IOException {
        assertThat(errorsOf(loadWith("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: 26.2
                """))).containsExactly(
                "clusters.yaml:3:5: clusters[0].macosVersion: number found, string expected (quote the version, e.g. macosVersion: \"26.2\")");
    }

    @Test
    void macosVersionMustBeValid() throws IOException {
        assertThat(errorsOf(loadWith("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "10.15"
                """))).containsExactly(
                "clusters.yaml:3:5: macosVersion '10.15' is not a valid macOS version; expected MAJOR[.MINOR[.PATCH]] with major 11 to 99, e.g. \"26.2\"");
        assertThat(MacosVersion.isValid("26")).isTrue();
        assertThat(MacosVersion.isValid("26.2.1")).isTrue();
        assertThat(MacosVersion.isValid("26.2.1.4")).isFalse();
        assertThat(MacosVersion.isValid("026.2")).isFalse();
        assertThat(MacosVersion.isValid("26.x")).isFalse();
    }

    @Test
    void machineNamesMustBeUniqueAcrossRangesAndFiles() throws IOException {
        write("more/extra.yaml", """
                machines:
                  - name: studio-02
                    address: 10.0.0.9
                """);
        assertThat(errorsOf(loadWith("fleet.yaml", FLEET))).containsExactly(
                "more/extra.yaml:2:5: machine name 'studio-02' is already used at " + directory.resolve("machines.yaml")
                        + ":2:5; expected unique machine names");
    }

    @Test
    void addressAndPortMustBeUnique() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-01
                    address: 10.0.0.1
                    cluster: llm-a
                  - name: studio-02
                    address: 10.0.0.1
                    cluster: llm-a
                  - name: studio-03
                    address: 10.0.0.1
                    ssh:
                      port: 2222
                """))).containsExactly(
                "machines.yaml:6:5: address 10.0.0.1 port 22 of machine 'studio-02' is already used by machine 'studio-01' at "
                        + directory.resolve("machines.yaml") + ":3:5; expected a unique address and SSH port per machine");
    }

    @Test
    void clusterNamesMustBeUnique() throws IOException {
        write("other.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.3"
                """);
        assertThat(errorsOf(loadWith("fleet.yaml", FLEET))).containsExactly(
                "other.yaml:2:5: cluster name 'llm-a' is already used at " + directory.resolve("clusters.yaml")
                        + ":2:5; expected unique cluster names");
    }

    @Test
    void aMachinesClusterMustExistEvenWhenSetByAGroup() throws IOException {
        write("fleet.yaml", FLEET.replace("    memoryGb: 256\n", "    memoryGb: 256\n    cluster: llm-x\n"));
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[1-2]
                    cluster: llm-a
                  - name: studio-03
                    address: 10.0.0.3
                    cluster: llm-b
                  - name: studio-04
                    address: 10.0.0.4
                    groups: [small]
                """))).containsExactly(
                "fleet.yaml:13:5: cluster 'llm-x' is not defined; expected one of: llm-a",
                "machines.yaml:7:5: cluster 'llm-b' is not defined; expected one of: llm-a");
    }

    @Test
    void groupsMustExist() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[1-2]
                    cluster: llm-a
                    groups: [big, huge]
                """))).containsExactly("machines.yaml:5:19: unknown group 'huge'; expected one of: big, small");
    }

    @Test
    void aFullMeshNeedsTwoToSixMachines() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-07]
                    address: 10.0.0.[1-7]
                    cluster: llm-a
                """))).containsExactly(
                "clusters.yaml:2:5: full-mesh cluster 'llm-a' has 7 machine(s); expected 2 to 6 (a Thunderbolt 5 full mesh; "
                        + "other sizes need topology kind explicit with links)");
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-01
                    address: 10.0.0.1
                    cluster: llm-a
                """))).singleElement().asString().contains("has 1 machine(s); expected 2 to 6");
    }

    @Test
    void anExplicitTopologyAllowsMoreMachinesButNeedsLinks() throws IOException {
        write("machines.yaml", """
                machines:
                  - name: studio-[01-07]
                    address: 10.0.0.[1-7]
                    cluster: llm-a
                """);
        write("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.2"
                    topology:
                      kind: explicit
                """);
        assertThat(errorsOf(InventoryLoader.load(directory)))
                .containsExactly("clusters.yaml:5:7: cluster 'llm-a' has topology kind explicit but no links; "
                        + "expected topology.links such as 'studio-01:1 <-> studio-02:1'");
        write("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.2"
                    topology:
                      kind: explicit
                      links:
                        - studio-01:1 <-> studio-02:1
                        - studio-02:2 <-> studio-03:1
                """);
        LoadResult result = InventoryLoader.load(directory);
        assertThat(result.errors()).isEmpty();
        assertThat(result.inventory().cluster("llm-a").orElseThrow().topology().links())
                .containsExactly(new Topology.Link(new PortReference("studio-01", 1), new PortReference("studio-02", 1)),
                        new Topology.Link(new PortReference("studio-02", 2), new PortReference("studio-03", 1)));
    }

    @Test
    void linkEndpointsMustResolveToPortsOneToSixOfClusterMembers() throws IOException {
        write("spare.yaml", """
                machines:
                  - name: spare-01
                    address: 10.0.0.50
                """);
        assertThat(errorsOf(loadWith("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "26.2"
                    topology:
                      links:
                        - studio-01:1 <-> studio-02:1
                        - studio-01:7 <-> studio-02:2
                        - studio-01:1 <-> studio-09:1
                        - studio-01:3 <-> spare-01:1
                        - studio-01 <-> studio-02
                        - studio-02:4 <-> studio-02:5
                """))).containsExactly(
                "clusters.yaml:7:11: link endpoint studio-01:7 names port 7; expected a Thunderbolt 5 port 1 to 6",
                "clusters.yaml:8:11: link endpoint studio-09:1 names an unknown machine 'studio-09'; expected a machine of cluster 'llm-a'",
                "clusters.yaml:8:11: port studio-01:1 is already cabled by the link at " + directory.resolve("clusters.yaml")
                        + ":6:11; expected each port in at most one link",
                "clusters.yaml:9:11: link endpoint spare-01:1: machine 'spare-01' is not in cluster 'llm-a'; expected a machine of this cluster",
                "clusters.yaml:10:11: link 'studio-01 <-> studio-02' is malformed; expected 'MACHINE:PORT <-> MACHINE:PORT', e.g. 'studio-01:2 <-> studio-03:5'",
                "clusters.yaml:11:11: link studio-02:4 <-> studio-02:5 connects a machine to itself; expected two different machines");
    }

    @Test
    void rangeLengthsMustMatch() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-04]
                    address: 10.0.0.[1-3]
                    cluster: llm-a
                  - name: studio-[05-06]
                    address: 10.0.0.5
                  - name: studio-07
                    address: 10.0.0.[7-8]
                  - name: studio-[09-08]
                    address: 10.0.0.[9-8]
                """))).containsExactly(
                "clusters.yaml:2:5: full-mesh cluster 'llm-a' has 0 machine(s); expected 2 to 6 (a Thunderbolt 5 full mesh; other sizes need topology kind explicit with links)",
                "machines.yaml:3:5: address range '10.0.0.[1-3]' has 3 values but name range 'studio-[01-04]' has 4; expected ranges of the same length",
                "machines.yaml:6:5: address '10.0.0.5' is a single address for the 2 machines of 'studio-[05-06]'; expected an address range of the same length, e.g. 192.168.50.[11-12]",
                "machines.yaml:8:5: address range '10.0.0.[7-8]' needs a name range; expected a name such as studio-[01-2] with as many values",
                "machines.yaml:9:5: range 'studio-[09-08]' is empty; expected [START-END] with START <= END and at most 1000 values",
                "machines.yaml:10:5: range '10.0.0.[9-8]' is empty; expected [START-END] with START <= END and at most 1000 values");
    }

    @Test
    void addressesAreIpv4OrHostNamesAfterExpansion() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[255-256]
                    cluster: llm-a
                  - name: studio-03
                    address: studio 03.local
                  - name: studio-04
                    address: studio-04.local
                  - name: studio-05
                    address: 10.0.1
                """))).containsExactly(
                "clusters.yaml:2:5: full-mesh cluster 'llm-a' has 1 machine(s); expected 2 to 6 (a Thunderbolt 5 full mesh; "
                        + "other sizes need topology kind explicit with links)",
                "machines.yaml:3:5: address '10.0.0.256' of machine 'studio-02' has the number 256 above 255; "
                        + "expected an IPv4 address (four numbers 0 to 255) or a host name",
                "machines.yaml:6:5: address 'studio 03.local' of machine 'studio-03' is neither an IPv4 address nor a valid host name; "
                        + "expected an IPv4 address (four numbers 0 to 255) or a host name",
                "machines.yaml:10:5: address '10.0.1' of machine 'studio-05' has 3 numbers; "
                        + "expected an IPv4 address (four numbers 0 to 255) or a host name");
    }

    @Test
    void atMostOneCoordinatorPerCluster() throws IOException {
        assertThat(errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[1-2]
                    cluster: llm-a
                    role: coordinator
                """))).containsExactly("clusters.yaml:2:5: cluster 'llm-a' has 2 coordinators (studio-01, studio-02); "
                + "expected at most one machine with role coordinator");
    }

    @Test
    void literalSecretsAreErrorsThatNeverEchoTheValue() throws IOException {
        List<String> errors = errorsOf(loadWith("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[1-2]
                    cluster: llm-a
                    ssh:
                      privateKey: |
                        -----BEGIN OPENSSH PRIVATE KEY-----
                        b3BlbnNzaC1rZXktdjEAAAAA
                        -----END OPENSSH PRIVATE KEY-----
                      passphrase: hunter2
                    volumeOwner:
                      user: admin
                      password: env:not a name
                """));
        assertThat(errors).containsExactly(
                "machines.yaml:6:7: ssh.privateKey holds what looks like a literal private key (value not shown); expected a secret reference env:NAME or file:PATH",
                "machines.yaml:10:7: ssh.passphrase holds a literal secret (value not shown); expected a secret reference env:NAME or file:PATH",
                "machines.yaml:13:7: volumeOwner.password holds a malformed secret reference (value not shown); expected a secret reference env:NAME or file:PATH");
        assertThat(String.join("\n", errors)).doesNotContain("b3BlbnNzaC1").doesNotContain("hunter2").doesNotContain("not a name");
    }

    @Test
    void everyErrorOfTheRunIsReportedSortedByFileAndLine() throws IOException {
        write("clusters.yaml", """
                clusters:
                  - name: llm-a
                    macosVersion: "9"
                """);
        write("fleet.yaml", FLEET.replace("file:~/.ssh/macfleet_ed25519", "secret"));
        write("machines.yaml", """
                machines:
                  - name: studio-[01-02]
                    address: 10.0.0.[1-2]
                    cluster: llm-a
                    memoryGb: lots
                    groups: [nope]
                """);
        assertThat(errorsOf(InventoryLoader.load(directory))).extracting(text -> text.substring(0, text.indexOf(": ")))
                .containsExactly("clusters.yaml:3:5", "fleet.yaml:4:5", "machines.yaml:5:5", "machines.yaml:6:14");
    }

    @Test
    void groupsDefaultsAndTheMdmServerAreDefinedOnce() throws IOException {
        write("more.yaml", """
                defaults:
                  model: Mac16,9
                groups:
                  small:
                    memoryGb: 128
                mdm:
                  url: https://mdm.example.com
                """);
        assertThat(errorsOf(loadWith("mdm.yaml", """
                mdm:
                  url: https://mdm.example.com
                  apiToken: env:MACFLEET_MDM_TOKEN
                """))).containsExactly(
                "more.yaml:1:1: defaults are already defined at " + directory.resolve("fleet.yaml") + ":1:1; expected one defaults section in the whole inventory",
                "more.yaml:4:3: group 'small' is already defined at " + directory.resolve("fleet.yaml") + ":11:3; expected unique group names",
                "more.yaml:6:1: the MDM server is already defined at " + directory.resolve("mdm.yaml") + ":1:1; expected one mdm section");
    }

    @Test
    void theMdmTokenIsASecretReference() throws IOException {
        LoadResult valid = loadWith("mdm.yaml", """
                mdm:
                  url: https://mdm.example.com
                  apiToken: env:MACFLEET_MDM_TOKEN
                """);
        assertThat(valid.errors()).isEmpty();
        assertThat(valid.inventory().mdm()).isEqualTo(new MdmServer("https://mdm.example.com", SecretReference.of("env:MACFLEET_MDM_TOKEN")));
        assertThat(errorsOf(loadWith("mdm.yaml", """
                mdm:
                  url: https://mdm.example.com
                  apiToken: 4f9d0c1e2b3a
                """))).containsExactly(
                "mdm.yaml:3:3: mdm.apiToken holds a literal secret (value not shown); expected a secret reference env:NAME or file:PATH");
    }

    @Test
    void oneYamlDocumentPerFile() throws IOException {
        assertThat(errorsOf(loadWith("extra.yaml", """
                machines: []
                ---
                clusters: []
                """))).containsExactly(
                "extra.yaml:3:1: a second YAML document in the same file; expected one document per file");
    }

    @Test
    void anUnreadableDirectoryIsItsOwnError() {
        assertThatThrownBy(() -> InventoryLoader.load(directory.resolve("missing")))
                .isInstanceOf(InventoryDirectoryException.class)
                .hasMessageContaining("not a directory");
        assertThatThrownBy(() -> InventoryLoader.load(directory))
                .isInstanceOf(InventoryDirectoryException.class)
                .hasMessageContaining("no *.yaml or *.yml files");
    }
}
