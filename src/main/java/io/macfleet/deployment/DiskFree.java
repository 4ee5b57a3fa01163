package io.macfleet.deployment;

import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * Reads {@code df -k PATH} as macOS prints it: a header naming the columns ({@code Filesystem 1024-blocks Used
 * Available Capacity iused ifree %iused Mounted on}) and one line per file system. The column is found by its header
 * (BSD and GNU df both call it Available or Avail), so a layout with or without the inode columns reads alike.
 */
public final class DiskFree {
    private DiskFree() {
    }

    public static OptionalLong availableBytes(String dfOutput) {
        List<String> lines = dfOutput.lines().filter(line -> !line.isBlank()).toList();
        if (lines.size() < 2) {
            return OptionalLong.empty();
        }
        String[] header = lines.getFirst().trim().split("\\s+");
        int column = -1;
        for (int index = 0; index < header.length; index++) {
            if (header[index].toLowerCase(Locale.ROOT).startsWith("avail")) {
                column = index;
            }
        }
        if (column < 0 || !lines.getFirst().contains("1024-blocks") && !lines.getFirst().contains("1K-blocks")) {
            return OptionalLong.empty();
        }
        // A long device name wraps onto a line of its own in some df versions: take the last line's fields.
        String[] fields = lines.getLast().trim().split("\\s+");
        int offset = fields.length - header.length + ("on".equals(header[header.length - 1]) ? 1 : 0);
        int index = column + offset;
        if (index < 0 || index >= fields.length || !fields[index].matches("\\d+")) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Long.parseLong(fields[index]) * 1024);
    }

    public static String human(long bytes) {
        if (bytes < 1024 * 1024) {
            return bytes + " bytes";
        }
        if (bytes < 1024L * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", bytes / 1024.0 / 1024);
        }
        return String.format(Locale.ROOT, "%.1f GiB", bytes / 1024.0 / 1024 / 1024);
    }
}
