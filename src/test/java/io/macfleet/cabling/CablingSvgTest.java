package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.browser.HeadlessChromium;
import io.macfleet.inventory.Topology;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CablingSvgTest {

    @Test
    void rendersInChromiumWithMachinesAndCablesColouredByState(@TempDir Path directory) throws Exception {
        ClusterFixture cluster = ClusterFixture.fullMesh("studio-01", "studio-02", "studio-03", "studio-04");
        Topology.Link removed = PortPlan.fullMesh("llm-a", cluster.names()).cableBetween("studio-02", "studio-04").orElseThrow();
        cluster.unplug("studio-02", removed.first().port(), "studio-04", removed.second().port());
        Topology.Link slow = PortPlan.fullMesh("llm-a", cluster.names()).cableBetween("studio-01", "studio-03").orElseThrow();
        cluster.unplug("studio-01", slow.first().port(), "studio-03", slow.second().port());
        cluster.cable("studio-01", slow.first().port(), "studio-03", slow.second().port(), "40 Gb/s");
        cluster.drive("studio-03", 6);
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("llm-a", cluster.names()), cluster.facts(), Optional.empty());
        Path svg = Files.writeString(directory.resolve("cabling.svg"), CablingSvg.render(report));

        String dom = HeadlessChromium.dumpDom(svg);
        assertThat(count(dom, "class=\"machine\"")).isEqualTo(4);
        assertThat(count(dom, "data-state=\"ok\"")).isEqualTo(4);
        assertThat(count(dom, "data-state=\"slow\"")).isEqualTo(1);
        assertThat(count(dom, "data-state=\"missing\"")).isEqualTo(1);
        assertThat(count(dom, "class=\"foreign\"")).isEqualTo(1);
        assertThat(dom).contains("data-machine=\"studio-01\"").contains("port 6: Envoy Ultra");

        Path png = HeadlessChromium.screenshot(svg, 760, 770, directory.resolve("cabling.png"));
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).as("a valid PNG").isNotNull();
        assertThat(image.getWidth()).isEqualTo(760);
        assertThat(hasColour(image, 0x2e7d32)).as("green cable drawn").isTrue();
        assertThat(hasColour(image, 0xef6c00)).as("orange (slow) cable drawn").isTrue();
        assertThat(hasColour(image, 0xc62828)).as("red (missing) cable drawn").isTrue();
        Files.createDirectories(Path.of("target/screenshots"));
        Files.copy(png, Path.of("target/screenshots/cabling-svg.png"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void escapesNames() {
        assertThat(CablingSvg.escape("a<b>&\"c\"")).isEqualTo("a&lt;b&gt;&amp;&quot;c&quot;");
    }

    private static int count(String text, String needle) {
        Matcher matcher = Pattern.compile(Pattern.quote(needle)).matcher(text);
        int count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }

    private static boolean hasColour(BufferedImage image, int rgb) {
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int pixel = image.getRGB(x, y) & 0xffffff;
                if (Math.abs(((pixel >> 16) & 0xff) - ((rgb >> 16) & 0xff)) <= 6
                        && Math.abs(((pixel >> 8) & 0xff) - ((rgb >> 8) & 0xff)) <= 6
                        && Math.abs((pixel & 0xff) - (rgb & 0xff)) <= 6) {
                    return true;
                }
            }
        }
        return false;
    }
}
