package io.macfleet.node.http;

/**
 * The JDK HTTP server's request and idle timeouts and header limits, shared by every server the node starts (rank
 * 0's API in {@code server}, the other ranks' health server in {@code cluster}, the authenticating proxy). It lives
 * below both so that {@code cluster} need not import {@code server} (which imports {@code cluster}).
 */
public final class HttpServerLimits {
    /** Seconds a client may take to send a whole request (headers and body); then the connection is closed. */
    public static final String REQUEST_SECONDS = "30";
    /** Seconds an idle keep-alive connection stays open. */
    public static final String IDLE_SECONDS = "30";

    private HttpServerLimits() {
    }

    /** Sets the JDK server's request and idle timeouts unless the JVM was started with others (-D...). */
    public static void configure() {
        setIfAbsent("sun.net.httpserver.maxReqTime", REQUEST_SECONDS);
        setIfAbsent("sun.net.httpserver.idleInterval", IDLE_SECONDS);
        setIfAbsent("sun.net.httpserver.maxReqHeaders", "100");
        setIfAbsent("sun.net.httpserver.maxReqHeaderSize", Integer.toString(64 * 1024));
    }

    private static void setIfAbsent(String property, String value) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, value);
        }
    }
}
