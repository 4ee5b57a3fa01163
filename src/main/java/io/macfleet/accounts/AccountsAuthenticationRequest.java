package io.macfleet.accounts;

import io.quarkus.security.identity.request.BaseAuthenticationRequest;

/** A session id from the cookie or an API token from the Authorization header, to be looked up. */
final class AccountsAuthenticationRequest extends BaseAuthenticationRequest {

    enum Kind { SESSION, TOKEN }

    private final Kind kind;
    private final String secret;

    AccountsAuthenticationRequest(Kind kind, String secret) {
        this.kind = kind;
        this.secret = secret;
    }

    Kind kind() {
        return kind;
    }

    String secret() {
        return secret;
    }
}
