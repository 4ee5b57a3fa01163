package io.macfleet.inventory;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.secrets.PrivateFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * A plan saved by {@code macfleet inventory plan --out FILE}, like a Terraform plan file: the inventory's YAML texts as
 * they were when planned and the changes the operator saw. {@code macfleet inventory apply FILE} loads those texts (not
 * the directory, which may have changed since) and applies them only if they still make exactly these changes.
 *
 * @param format always {@value #FORMAT}, so another JSON file is refused with a clear message
 * @param directory where the inventory was read from, for the audit entry
 * @param files the YAML texts, keyed by path relative to the directory
 */
public record SavedPlan(String format, String directory, Map<String, String> files, Plan plan) {

    public static final String FORMAT = "macfleet-inventory-plan/1";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** A saved plan cannot be read or is not one. */
    public static final class UnreadablePlanException extends RuntimeException {
        public UnreadablePlanException(String message) {
            super(message);
        }
    }

    public SavedPlan {
        Objects.requireNonNull(plan, "plan");
        files = Map.copyOf(files);
    }

    public static SavedPlan of(Path directory, Map<String, String> files, Plan plan) {
        return new SavedPlan(FORMAT, directory.toAbsolutePath().normalize().toString(), files, plan);
    }

    /** Written readable by the owner only: the inventory names hosts, users and secret references. */
    public void write(Path file) throws IOException {
        PrivateFiles.write(file, JSON.writeValueAsString(this) + "\n");
    }

    public static SavedPlan read(Path file) {
        SavedPlan saved;
        try {
            saved = JSON.readValue(Files.readString(file), SavedPlan.class);
        } catch (NoSuchFileException e) {
            throw new UnreadablePlanException(file + ": no such file");
        } catch (IOException | RuntimeException e) {
            throw new UnreadablePlanException(file + ": not a plan saved by macfleet inventory plan --out (" + firstLine(e.getMessage()) + ")");
        }
        if (!FORMAT.equals(saved.format()) || saved.files() == null || saved.files().isEmpty()) {
            throw new UnreadablePlanException(file + ": not a plan saved by macfleet inventory plan --out (format '" + saved.format()
                    + "', expected '" + FORMAT + "' with the inventory's files)");
        }
        return saved;
    }

    private static String firstLine(String message) {
        return message == null ? "unreadable" : message.lines().findFirst().orElse("unreadable");
    }
}
