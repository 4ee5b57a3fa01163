package io.macfleet.documentation;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The guides are read on GitHub, where a broken relative link or anchor is a dead end. Area notes moved between files
 * (DEVELOPMENT.md was cut to a guide, its area notes went to docs/), so every relative link and every anchor is
 * checked here, with GitHub's heading slugs; and DEVELOPMENT.md stays a guide, not a notebook.
 */
class DocumentationLinksTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");
    private static final int MAXIMUM_DEVELOPMENT_GUIDE_LINES = 400;

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void everyRelativeLinkAndAnchorResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path file : markdownFiles()) {
            List<String> lines = Files.readAllLines(file);
            boolean fenced = false;
            for (int index = 0; index < lines.size(); index++) {
                String line = lines.get(index);
                if (line.startsWith("```")) {
                    fenced = !fenced;
                }
                if (fenced) {
                    continue;
                }
                Matcher link = LINK.matcher(line);
                while (link.find()) {
                    String problem = problem(file, link.group(1));
                    if (problem != null) {
                        broken.add(ROOT.relativize(file) + ":" + (index + 1) + ": " + problem);
                    }
                }
            }
        }
        assertThat(broken).as("broken links in the guides").isEmpty();
    }

    @Test
    void theDevelopmentGuideStaysShort() throws IOException {
        assertThat(Files.readAllLines(ROOT.resolve("DEVELOPMENT.md")))
                .as("DEVELOPMENT.md: rules and pointers; area notes belong in docs/, figures in docs/benchmarks.md")
                .hasSizeLessThanOrEqualTo(MAXIMUM_DEVELOPMENT_GUIDE_LINES);
    }

    @Test
    void theCheckFindsABrokenAnchor() throws IOException {
        // The check itself must be able to fail: an anchor that no heading makes.
        assertThat(problem(ROOT.resolve("DEVELOPMENT.md"), "#no-such-heading-anywhere")).contains("no heading");
        assertThat(problem(ROOT.resolve("DEVELOPMENT.md"), "docs/no-such-guide.md")).contains("no file");
        assertThat(problem(ROOT.resolve("DEVELOPMENT.md"), "#tests")).isNull();
    }

    private String problem(Path file, String target) throws IOException {
        if (target.matches("^(https?|mailto):.*")) {
            return null;
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? "" : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
            return target + ": no file " + ROOT.relativize(resolved);
        }
        if (!anchor.isEmpty() && resolved.toString().endsWith(".md") && !anchorsOf(resolved).contains(anchor)) {
            return target + ": no heading makes #" + anchor + " in " + ROOT.relativize(resolved);
        }
        return null;
    }

    private Set<String> anchorsOf(Path file) throws IOException {
        Set<String> known = anchors.get(file);
        if (known != null) {
            return known;
        }
        known = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(file)) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            Matcher heading = HEADING.matcher(line);
            if (!fenced && heading.matches()) {
                String slug = slug(heading.group(1));
                int count = seen.merge(slug, 1, Integer::sum) - 1;
                known.add(count == 0 ? slug : slug + "-" + count);
            }
        }
        anchors.put(file, known);
        return known;
    }

    /** GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
    static String slug(String heading) {
        return heading.replace("`", "").strip().toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
                .replace(' ', '-');
    }

    private static List<Path> markdownFiles() throws IOException {
        List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("DEVELOPMENT.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        return files;
    }
}
