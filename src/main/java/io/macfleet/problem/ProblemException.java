package io.macfleet.problem;

/** Ends a request with a problem answer (404 for an unknown name, 400 for a bad parameter). */
public class ProblemException extends RuntimeException {
    private final int status;
    private final String title;

    public ProblemException(int status, String title, String detail) {
        super(detail);
        this.status = status;
        this.title = title;
    }

    public static ProblemException notFound(String what, String name) {
        return new ProblemException(404, "Not Found", "no " + what + " named '" + name + "' in the applied inventory");
    }

    public static ProblemException badRequest(String detail) {
        return new ProblemException(400, "Bad Request", detail);
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }
}
