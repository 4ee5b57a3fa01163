package io.macfleet.api;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * A plain HTML page for an error met before a console resource could answer (a form over the size limit): a person
 * at a browser gets words and a way back, not problem JSON. Every text is escaped.
 */
final class ErrorPage {

    private ErrorPage() {
    }

    static Response response(int status, String title, String detail, String backUrl, String backLabel) {
        String html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(title) + " · macfleet</title>\n"
                + "<link rel=\"stylesheet\" href=\"/console/static/console.css\">\n</head>\n<body>\n<main id=\"main\">\n<h1>"
                + escape(title) + "</h1>\n<p class=\"notice bad\" role=\"alert\">" + escape(detail == null ? "" : detail) + "</p>\n<p><a href=\""
                + escape(backUrl) + "\">" + escape(backLabel) + "</a></p>\n</main>\n</body>\n</html>\n";
        return Response.status(status).type(MediaType.TEXT_HTML_TYPE.withCharset("UTF-8")).entity(html).build();
    }

    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '<' -> escaped.append("&lt;");
                case '>' -> escaped.append("&gt;");
                case '&' -> escaped.append("&amp;");
                case '"' -> escaped.append("&quot;");
                case '\'' -> escaped.append("&#39;");
                default -> escaped.append(c);
            }
        }
        return escaped.toString();
    }
}
