package io.macfleet.fleet;

/**
 * One cell of a status column: how good it is, the words shown, and a longer explanation (tooltip, detail pages).
 * The words always carry the meaning; the colour only repeats it.
 */
public record Status(Level level, String label, String detail) {

    public enum Level {
        OK("ok"), WARNING("warn"), PROBLEM("bad"), NONE("none");

        private final String css;

        Level(String css) {
            this.css = css;
        }

        public String css() {
            return css;
        }
    }

    public static Status ok(String label, String detail) {
        return new Status(Level.OK, label, detail);
    }

    public static Status warning(String label, String detail) {
        return new Status(Level.WARNING, label, detail);
    }

    public static Status problem(String label, String detail) {
        return new Status(Level.PROBLEM, label, detail);
    }

    public static Status none(String label, String detail) {
        return new Status(Level.NONE, label, detail);
    }

    public boolean isProblem() {
        return level == Level.PROBLEM;
    }

    public String css() {
        return level.css();
    }
}
