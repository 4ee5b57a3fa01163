package io.macfleet.osupdate;

/** Comparing macOS versions such as 26.1, 26.2 and 26.2.1 numerically (a missing part is 0). */
public final class Versions {
    private Versions() {
    }

    public static int compare(String left, String right) {
        String[] a = left.split("\\.");
        String[] b = right.split("\\.");
        for (int index = 0; index < Math.max(a.length, b.length); index++) {
            int x = index < a.length ? parse(a[index]) : 0;
            int y = index < b.length ? parse(b[index]) : 0;
            if (x != y) {
                return Integer.compare(x, y);
            }
        }
        return 0;
    }

    private static int parse(String part) {
        try {
            return Integer.parseInt(part.replaceAll("[^0-9].*", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
