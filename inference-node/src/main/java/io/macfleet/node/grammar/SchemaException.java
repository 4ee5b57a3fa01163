package io.macfleet.node.grammar;

/** A schema outside the supported subset or malformed; names the keyword and where it is (a JSON pointer). */
public final class SchemaException extends RuntimeException {
    private final String keyword;

    public SchemaException(String keyword, String path, String problem) {
        super((keyword == null ? "schema at " + path : "keyword '" + keyword + "' at " + path) + " " + problem);
        this.keyword = keyword;
    }

    /** The offending keyword, or null when the schema itself is malformed. */
    public String keyword() {
        return keyword;
    }
}
