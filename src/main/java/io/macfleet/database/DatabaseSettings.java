package io.macfleet.database;

import io.macfleet.secrets.SecretReference;

/**
 * Where the database is: a JDBC URL (H2 or PostgreSQL, chosen at run time by the URL), a user, and the
 * password as a secret reference (null for none).
 */
public record DatabaseSettings(String url, String user, SecretReference password) {

    public DatabaseSettings {
        if (url == null || !(url.startsWith("jdbc:h2:") || url.startsWith("jdbc:postgresql:"))) {
            throw new IllegalArgumentException("macfleet.database.url '" + url
                    + "' is not supported; expected jdbc:h2:... or jdbc:postgresql://...");
        }
        user = user == null ? "" : user;
    }

    public boolean postgresql() {
        return url.startsWith("jdbc:postgresql:");
    }

    /** The URL without credentials or options, safe to show. */
    public String displayUrl() {
        int options = url.indexOf(url.startsWith("jdbc:h2:") ? ';' : '?');
        return options < 0 ? url : url.substring(0, options);
    }
}
