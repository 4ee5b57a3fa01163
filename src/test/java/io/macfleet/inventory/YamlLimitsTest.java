package io.macfleet.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Big or hostile YAML is refused quickly, naming the limit; a real big fleet still loads (issue 14, item 4). */
public class YamlLimitsTest {

    @TempDir
    Path directory;

    /** 2,000 machines written out one by one, each with its own address, serial number and labels. */
    public static String inventoryOf(int machines) {
        StringBuilder text = new StringBuilder("""
                defaults:
                  ssh:
                    user: admin
                    privateKey: file:~/.ssh/macfleet_ed25519
                  model: Mac15,14
                clusters:
                """);
        for (int cluster = 0; cluster < machines / 4; cluster++) {
            text.append("  - name: llm-").append(cluster).append("\n    macosVersion: \"26.2\"\n");
        }
        text.append("machines:\n");
        for (int machine = 0; machine < machines; machine++) {
            text.append("  - name: studio-").append(String.format("%04d", machine)).append('\n')
                    .append("    address: 10.").append(machine / 250).append('.').append(machine % 250).append(".1\n")
                    .append("    serialNumber: H2WQX").append(String.format("%05d", machine)).append('\n')
                    .append("    cluster: llm-").append(machine / 4).append('\n')
                    .append("    memoryGb: 512\n")
                    .append("    labels:\n      rack: r").append(machine / 40).append("\n      row: \"").append(machine / 400).append("\"\n");
        }
        return text.toString();
    }

    @Test
    void anInventoryOfTwoThousandMachinesStillLoads() {
        String text = inventoryOf(2_000);
        assertThat(text.length()).isLessThan(PositionedYaml.MAXIMUM_DOCUMENT_BYTES);
        List<Long> millis = new ArrayList<>();
        LoadResult result = null;
        for (int run = 0; run < 5; run++) {
            long start = System.nanoTime();
            result = InventoryLoader.loadDocument(text);
            millis.add((System.nanoTime() - start) / 1_000_000);
        }
        assertThat(result.errors()).isEmpty();
        assertThat(result.inventory().machines()).hasSize(2_000);
        System.out.printf("2,000-machine inventory (%d bytes): load %s ms (5 runs)%n", text.length(), millis);
    }

    @Test
    void aDocumentOverTheSizeCapIsRefusedBeforeParsing() {
        String text = "machines:\n" + "  - name: a\n".repeat(PositionedYaml.MAXIMUM_DOCUMENT_BYTES / 12 + 10);
        long start = System.nanoTime();
        assertThatThrownBy(() -> PositionedYaml.parse(text))
                .isInstanceOf(PositionedYaml.SyntaxException.class)
                .hasMessageContaining(PositionedYaml.LIMIT_EXCEEDED)
                .hasMessageContaining(PositionedYaml.MAXIMUM_DOCUMENT_BYTES + " bytes");
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_000);
        LoadResult result = InventoryLoader.loadDocument(text);
        assertThat(result.errors()).singleElement().satisfies(error -> assertThat(PositionedYaml.isLimitMessage(error.message())).isTrue());
    }

    @Test
    void aFileOverTheSizeCapIsAnUnreadableDirectoryNamingTheLimit() throws Exception {
        Files.writeString(directory.resolve("huge.yaml"), "machines:\n" + "  - name: a\n".repeat(PositionedYaml.MAXIMUM_DOCUMENT_BYTES / 12 + 10));
        assertThatThrownBy(() -> InventoryLoader.load(directory))
                .isInstanceOf(InventoryDirectoryException.class)
                .hasMessageContaining("huge.yaml")
                .hasMessageContaining(PositionedYaml.LIMIT_EXCEEDED + " of " + PositionedYaml.MAXIMUM_DOCUMENT_BYTES + " bytes");
    }

    @Test
    void tooManyValuesAreRefused() {
        String text = "machines:\n" + "- 1\n".repeat(PositionedYaml.MAXIMUM_NODES + 10);
        assertThat(text.length()).isLessThan(PositionedYaml.MAXIMUM_DOCUMENT_BYTES);
        assertThatThrownBy(() -> PositionedYaml.parse(text))
                .hasMessageContaining(PositionedYaml.LIMIT_EXCEEDED + " of " + PositionedYaml.MAXIMUM_NODES + " values");
    }

    @Test
    void deepNestingIsRefused() {
        String text = "a: " + "[".repeat(1_000) + "]".repeat(1_000) + "\n";
        assertThatThrownBy(() -> PositionedYaml.parse(text))
                .hasMessageContaining(PositionedYaml.LIMIT_EXCEEDED);
    }

    @Test
    void aliasesDoNotMultiplyTheDocument() throws Exception {
        // The "billion laughs" shape: each level refers to the one before ten times.
        StringBuilder text = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int level = 1; level < 9; level++) {
            text.append("a").append(level).append(": &a").append(level).append(" [");
            for (int i = 0; i < 10; i++) {
                text.append(i == 0 ? "" : ", ").append("*a").append(level - 1);
            }
            text.append("]\n");
        }
        long start = System.nanoTime();
        try {
            PositionedYaml yaml = PositionedYaml.parse(text.toString());
            assertThat(yaml.root().size()).isEqualTo(9);
        } catch (PositionedYaml.SyntaxException refused) {
            assertThat(refused.getMessage()).isNotBlank();
        }
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(2_000);
    }
}
