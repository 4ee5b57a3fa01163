package io.macfleet.provision;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.networknt.schema.JsonNodePath;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.macfleet.inventory.PositionedYaml;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Reads playbooks: YAML validated against {@code schemas/playbook.schema.json}, then every step's parameters by
 * its step type, found by name in {@link StepTypes}. All errors of a file at once, each with file:line:column.
 * The entries without a {@link StepTypes} argument know the built-in step types.
 */
public final class PlaybookLoader {

    public static final String SCHEMA_RESOURCE = "schemas/playbook.schema.json";
    /** Names kept for step types that come with later issues: a clear error rather than a silent acceptance. */
    public static final Map<String, String> RESERVED_TYPES = Map.of(
            "mdm", "the MDM integration issue (commands and profiles pushed through the MDM server)");

    private static final JsonSchema SCHEMA = loadSchema();
    private static final ObjectMapper PARAMETERS = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(com.fasterxml.jackson.databind.MapperFeature.ALLOW_COERCION_OF_SCALARS);

    /** One problem in a playbook file. */
    public record Problem(String file, int line, int column, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ":" + column + ": " + message;
        }
    }

    /** A playbook that cannot be used; the message lists every problem, one per line. */
    public static final class InvalidPlaybookException extends RuntimeException {
        private final List<Problem> problems;

        InvalidPlaybookException(List<Problem> problems) {
            super(String.join("\n", problems.stream().map(Problem::toString).toList()));
            this.problems = List.copyOf(problems);
        }

        public List<Problem> problems() {
            return problems;
        }
    }

    private PlaybookLoader() {
    }

    /** A playbook file; template files it names are read from its directory. */
    public static Playbook load(Path file) {
        return load(file, StepTypes.builtIn());
    }

    /** A playbook file, its steps read by the given step types. */
    public static Playbook load(Path file, StepTypes stepTypes) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new InvalidPlaybookException(List.of(new Problem(file.toString(), 1, 1, "cannot read the playbook: " + e.getMessage())));
        }
        Path directory = file.toAbsolutePath().getParent();
        return parse(file.toString(), defaultName(file.getFileName().toString()), text, stepTypes, name -> {
            try {
                return Files.readString(directory.resolve(name), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the template file " + directory.resolve(name) + ": " + e.getMessage());
            }
        });
    }

    /**
     * A playbook by name or path: an existing file path as given; else NAME.yaml in the playbooks directory (if
     * there is one); else the copy shipped in the application.
     */
    public static Playbook resolve(String nameOrPath, Path playbooksDirectory) {
        return resolve(nameOrPath, playbooksDirectory, StepTypes.builtIn());
    }

    /** {@link #resolve(String, Path)}, the steps read by the given step types. */
    public static Playbook resolve(String nameOrPath, Path playbooksDirectory, StepTypes stepTypes) {
        Path asPath = Path.of(nameOrPath);
        if (Files.isRegularFile(asPath)) {
            return load(asPath, stepTypes);
        }
        if (!nameOrPath.matches("[A-Za-z0-9._-]+")) {
            throw new InvalidPlaybookException(List.of(new Problem(nameOrPath, 1, 1, "no such playbook file")));
        }
        String fileName = nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") ? nameOrPath : nameOrPath + ".yaml";
        if (playbooksDirectory != null && Files.isRegularFile(playbooksDirectory.resolve(fileName))) {
            return load(playbooksDirectory.resolve(fileName), stepTypes);
        }
        String resource = "playbooks/" + fileName;
        String text = resourceText(resource);
        if (text == null) {
            throw new InvalidPlaybookException(List.of(new Problem(nameOrPath, 1, 1, "no playbook named '" + nameOrPath + "'; shipped: "
                    + String.join(", ", shipped()) + (playbooksDirectory == null ? "" : " (also looked in " + playbooksDirectory + ")"))));
        }
        return parse(resource, defaultName(fileName), text, stepTypes, name -> {
            String sibling = resourceText("playbooks/" + name);
            if (sibling == null) {
                throw new IllegalArgumentException("no template file " + name + " next to " + resource);
            }
            return sibling;
        });
    }

    /** The playbooks shipped in the application. */
    public static List<String> shipped() {
        return List.of("provision", "rdma-enable", "bootstrap-token", "thunderbolt-network");
    }

    /** The shipped playbooks and the *.yaml / *.yml files of the playbooks directory (if there is one), by name, sorted. */
    public static List<String> names(Path playbooksDirectory) {
        java.util.TreeSet<String> names = new java.util.TreeSet<>(shipped());
        if (playbooksDirectory != null && Files.isDirectory(playbooksDirectory)) {
            try (var files = Files.list(playbooksDirectory)) {
                files.map(file -> file.getFileName().toString()).filter(name -> name.endsWith(".yaml") || name.endsWith(".yml"))
                        .map(PlaybookLoader::defaultName).forEach(names::add);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot list the playbooks directory " + playbooksDirectory, e);
            }
        }
        return List.copyOf(names);
    }

    /** Every *.yaml / *.yml of a directory (not recursive), or the one file. Problems of all files, in file order. */
    public static List<Problem> validate(Path fileOrDirectory) {
        return validate(fileOrDirectory, StepTypes.builtIn());
    }

    /** {@link #validate(Path)}, the steps read by the given step types. */
    public static List<Problem> validate(Path fileOrDirectory, StepTypes stepTypes) {
        List<Path> files;
        if (Files.isDirectory(fileOrDirectory)) {
            try (Stream<Path> listing = Files.list(fileOrDirectory)) {
                files = listing.filter(path -> path.toString().endsWith(".yaml") || path.toString().endsWith(".yml")).sorted().toList();
            } catch (IOException e) {
                return List.of(new Problem(fileOrDirectory.toString(), 1, 1, "cannot list the directory: " + e.getMessage()));
            }
            if (files.isEmpty()) {
                return List.of(new Problem(fileOrDirectory.toString(), 1, 1, "no *.yaml playbook in this directory"));
            }
        } else {
            files = List.of(fileOrDirectory);
        }
        List<Problem> problems = new ArrayList<>();
        for (Path file : files) {
            try {
                load(file, stepTypes);
            } catch (InvalidPlaybookException e) {
                problems.addAll(e.problems());
            }
        }
        return problems;
    }

    static String defaultName(String fileName) {
        return fileName.replaceFirst("\\.ya?ml$", "");
    }

    /** Parses and validates one playbook text. */
    static Playbook parse(String source, String defaultName, String text, StepTypes stepTypes, StepType.PlaybookFiles siblingFiles) {
        PositionedYaml yaml;
        try {
            yaml = PositionedYaml.parse(text, "valid YAML (a playbook: name, description, steps)");
        } catch (PositionedYaml.SyntaxException e) {
            throw new InvalidPlaybookException(List.of(new Problem(source, e.position().line(), e.position().column(), e.getMessage())));
        }
        List<Problem> problems = new ArrayList<>();
        for (ValidationMessage message : SCHEMA.validate(yaml.root())) {
            problems.add(schemaProblem(source, yaml, message));
        }
        if (!problems.isEmpty()) {
            throw failure(problems);
        }
        JsonNode root = yaml.root();
        String name = root.hasNonNull("name") ? root.get("name").asText() : defaultName;
        String description = root.hasNonNull("description") ? root.get("description").asText() : "";
        List<PlaybookStep> steps = new ArrayList<>();
        Set<String> names = new HashSet<>();
        JsonNode list = root.get("steps");
        for (int index = 0; index < list.size(); index++) {
            String pointer = "/steps/" + index;
            JsonNode step = list.get(index);
            String stepName = step.get("name").asText();
            int line = yaml.positionOf(pointer).line();
            if (!names.add(stepName)) {
                problems.add(problem(source, yaml, pointer + "/name", "duplicate step name '" + stepName + "'; expected unique step names"));
                continue;
            }
            String type = step.get("type").asText();
            if (RESERVED_TYPES.containsKey(type)) {
                problems.add(problem(source, yaml, pointer + "/type", "step type '" + type + "' is not available yet: it arrives with "
                        + RESERVED_TYPES.get(type)));
                continue;
            }
            StepType<?> stepType = stepTypes.find(type).orElse(null);
            if (stepType == null) {
                problems.add(problem(source, yaml, pointer + "/type", "unknown step type '" + type + "'; expected one of " + String.join(", ", stepTypes.names())));
                continue;
            }
            PlaybookStep.Scope scope = stepType.scope();
            if (step.hasNonNull("scope")) {
                PlaybookStep.Scope declared = PlaybookStep.Scope.valueOf(step.get("scope").asText().toUpperCase(java.util.Locale.ROOT));
                if (declared != scope) {
                    List<String> clusterTypes = stepTypes.all().stream().filter(t -> t.scope() == PlaybookStep.Scope.CLUSTER).map(StepType::name).toList();
                    problems.add(problem(source, yaml, pointer + "/scope", "step type " + type + " has scope " + scope.label()
                            + ", not " + declared.label() + " (only " + String.join(", ", clusterTypes) + (clusterTypes.size() == 1 ? " acts" : " act")
                            + " on a whole cluster)"));
                    continue;
                }
            }
            Condition when = null;
            if (step.hasNonNull("when")) {
                try {
                    when = new Condition(step.get("when").get("fact").asText(), PARAMETERS.convertValue(step.get("when").get("equals"), Object.class));
                } catch (IllegalArgumentException e) {
                    problems.add(problem(source, yaml, pointer + "/when/fact", e.getMessage()));
                    continue;
                }
            }
            JsonNode parameters = step.hasNonNull("params") ? step.get("params") : PARAMETERS.createObjectNode();
            try {
                StepDefinition definition = definition(stepType, parameters, siblingFiles);
                steps.add(new PlaybookStep(stepName, type, scope, when, definition, line));
            } catch (JsonMappingException e) {
                problems.add(parameterProblem(source, yaml, pointer + "/params", stepType, e));
            } catch (IllegalArgumentException e) {
                problems.add(problem(source, yaml, pointer + "/params", "step '" + stepName + "' (" + type + "): " + e.getMessage()));
            }
        }
        if (!problems.isEmpty()) {
            throw failure(problems);
        }
        return new Playbook(name, source, sha256(text), description, steps);
    }

    private static <P extends Record> StepDefinition definition(StepType<P> type, JsonNode parameters, StepType.PlaybookFiles siblingFiles)
            throws JsonMappingException {
        P read;
        try {
            read = PARAMETERS.treeToValue(parameters, type.parameters());
        } catch (JsonMappingException e) {
            throw e;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(e.getOriginalMessage(), e);
        }
        return type.define(read, siblingFiles);
    }

    private static Problem parameterProblem(String source, PositionedYaml yaml, String paramsPointer, StepType<?> stepType, JsonMappingException e) {
        String type = stepType.name();
        List<Object> elements = new ArrayList<>();
        for (JsonMappingException.Reference reference : e.getPath()) {
            elements.add(reference.getFieldName() != null ? reference.getFieldName() : (Object) reference.getIndex());
        }
        String pointer = paramsPointer + PositionedYaml.pointer(elements);
        String where = elements.isEmpty() ? "params" : "params." + String.join(".", elements.stream().map(String::valueOf).toList());
        if (e instanceof UnrecognizedPropertyException unknown) {
            List<String> known = unknown.getKnownPropertyIds().stream().map(String::valueOf).sorted().toList();
            return problem(source, yaml, pointer, "unknown parameter '" + unknown.getPropertyName() + "' of step type " + type
                    + "; expected one of " + String.join(", ", known));
        }
        if (e instanceof ValueInstantiationException invalid) {
            Throwable cause = invalid.getCause() == null ? invalid : invalid.getCause();
            return problem(source, yaml, pointer, where + ": " + cause.getMessage());
        }
        return problem(source, yaml, pointer, where + ": " + e.getOriginalMessage().replaceAll("\\s*\\((for Object starting at|but might if).*", "")
                .replace("`java.lang.Integer`", "a whole number").replace("`java.lang.Boolean`", "true or false").replace("`java.lang.String`", "text")
                .replaceAll("`io\\.macfleet\\.provision\\.[A-Za-z$]+`", "the parameters").replace("`" + stepType.parameters().getName() + "`", "the parameters"));
    }

    private static Problem schemaProblem(String source, PositionedYaml yaml, ValidationMessage message) {
        JsonNodePath location = message.getInstanceLocation();
        List<Object> elements = new ArrayList<>();
        for (int index = 0; index < location.getNameCount(); index++) {
            elements.add(location.getElement(index));
        }
        String pointer = PositionedYaml.pointer(elements);
        String text = message.getMessage();
        String prefix = location + ": ";
        if (text.startsWith(prefix)) {
            text = text.substring(prefix.length());
        }
        if ("additionalProperties".equals(message.getType()) && message.getProperty() != null) {
            pointer = pointer + "/" + PositionedYaml.escape(message.getProperty());
            text = "unknown key '" + message.getProperty() + "'; expected only the keys the playbook schema defines";
        }
        String field = location.toString().replaceFirst("^\\$\\.?", "");
        return problem(source, yaml, pointer, (field.isEmpty() ? "" : field + ": ") + text);
    }

    private static Problem problem(String source, PositionedYaml yaml, String pointer, String message) {
        PositionedYaml.Position position = yaml.positionOf(pointer);
        return new Problem(source, position.line(), position.column(), message);
    }

    private static InvalidPlaybookException failure(List<Problem> problems) {
        List<Problem> sorted = new ArrayList<>(problems);
        sorted.sort(Comparator.comparingInt(Problem::line).thenComparingInt(Problem::column));
        return new InvalidPlaybookException(sorted);
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String resourceText(String resource) {
        try (InputStream in = PlaybookLoader.class.getClassLoader().getResourceAsStream(resource)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JsonSchema loadSchema() {
        String text = resourceText(SCHEMA_RESOURCE);
        if (text == null) {
            throw new IllegalStateException(SCHEMA_RESOURCE + " is missing from the class path");
        }
        try {
            return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(new ObjectMapper().readTree(text));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The schema as text, for the docs. */
    public static String schemaText() {
        return resourceText(SCHEMA_RESOURCE);
    }
}
