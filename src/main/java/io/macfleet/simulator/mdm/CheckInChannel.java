package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * A simulated Mac's side of Apple's MDM protocol, as a Mac speaks it to its MDM server
 * (developer.apple.com/documentation/devicemanagement: "Check-in", "Implementing device management"): XML property
 * lists over HTTP PUT, check-ins ({@code Authenticate}, {@code TokenUpdate}, {@code CheckOut},
 * {@code DeclarativeManagement}) to the CheckInURL with content type {@code application/x-apple-aspen-mdm-checkin},
 * and the command loop on the ServerURL ({@code Status} Idle, then Acknowledged for each command, until the server
 * answers with an empty body). Declarative management goes through {@code DeclarativeManagement} check-ins whose
 * {@code Endpoint} is {@code declaration-items}, {@code declaration/<kind>/<identifier>} or {@code status} (the status
 * report as the {@code Data}).
 *
 * <p>The device identity certificate travels in a header (NanoHUB's {@code -cert-header}, RFC 9440 form), as it does
 * behind a TLS-terminating proxy. There is no APNs here: the device polls its command queue every tick instead of
 * waiting for a push, which is what a Mac does after a push arrives.
 */
final class CheckInChannel implements DeviceChannel {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHECK_IN_TYPE = "application/x-apple-aspen-mdm-checkin";
    private static final String COMMAND_TYPE = "application/x-apple-aspen-mdm";
    private static final Map<String, String> KIND_BY_GROUP = Map.of("Activations", "activation", "Configurations", "configuration",
            "Assets", "asset", "Management", "management");

    private final String udid;
    private final String topic;
    private final URI serverUrl;
    private final URI checkInUrl;
    private final String certificateHeader;
    private final String certificate;
    private final HttpClient http;
    private final Duration deadline;
    private final Map<String, DdmStore.StoredDeclaration> fetched = new HashMap<>();
    private final List<String> fetches = new CopyOnWriteArrayList<>();

    CheckInChannel(String udid, String topic, URI serverUrl, URI checkInUrl, String certificateHeader, String certificate, HttpClient http, Duration deadline) {
        this.udid = udid;
        this.topic = topic;
        this.serverUrl = serverUrl;
        this.checkInUrl = checkInUrl;
        this.certificateHeader = certificateHeader;
        this.certificate = certificate;
        this.http = http;
        this.deadline = deadline;
    }

    /** Each declaration revision fetched ({@code identifier@token}), in order. */
    List<String> fetches() {
        return List.copyOf(fetches);
    }

    void authenticate(String serialNumber, String model, String osVersion, String buildVersion) {
        checkIn(entries("MessageType", "Authenticate", "Topic", topic, "UDID", udid, "SerialNumber", serialNumber,
                "Model", model, "ProductName", model, "OSVersion", osVersion, "BuildVersion", buildVersion));
    }

    void tokenUpdate() {
        // A push token the device would get from APNs: 32 bytes. NanoHUB stores it; nothing is pushed without a push certificate.
        byte[] token = new byte[32];
        System.arraycopy(udid.getBytes(StandardCharsets.UTF_8), 0, token, 0, Math.min(32, udid.length()));
        Map<String, Object> body = entries("MessageType", "TokenUpdate", "Topic", topic, "UDID", udid,
                "PushMagic", java.util.UUID.nameUUIDFromBytes(token).toString().toUpperCase(java.util.Locale.ROOT));
        body.put("Token", token);
        checkIn(body);
    }

    void checkOut() {
        checkIn(entries("MessageType", "CheckOut", "Topic", topic, "UDID", udid));
    }

    @Override
    public List<SimulatedMdmDevice.ReceivedCommand> commands() {
        List<SimulatedMdmDevice.ReceivedCommand> received = new ArrayList<>();
        String answer = put(serverUrl, COMMAND_TYPE, plist(entries("UDID", udid, "Status", "Idle")));
        // The server hands out one command per answer; the device answers each and gets the next, until none is left.
        while (!answer.isBlank() && received.size() < 100) {
            Map<String, Node> command = dictionary(answer);
            String uuid = command.get("CommandUUID").getTextContent();
            String requestType = dictionary((Element) command.get("Command")).get("RequestType").getTextContent();
            received.add(new SimulatedMdmDevice.ReceivedCommand(uuid, requestType));
            answer = put(serverUrl, COMMAND_TYPE, plist(entries("UDID", udid, "Status", "Acknowledged", "CommandUUID", uuid)));
        }
        return received;
    }

    @Override
    public List<DdmStore.StoredDeclaration> declarations(Map<String, String> knownTokens) {
        JsonNode items = readJson(declarativeManagement("declaration-items", null)).path("Declarations");
        List<DdmStore.StoredDeclaration> declarations = new ArrayList<>();
        for (Map.Entry<String, String> group : KIND_BY_GROUP.entrySet()) {
            for (JsonNode item : items.path(group.getKey())) {
                String identifier = item.path("Identifier").asText();
                String token = item.path("ServerToken").asText();
                DdmStore.StoredDeclaration cached = fetched.get(identifier);
                if (cached == null || !cached.serverToken().equals(token)) {
                    JsonNode body = readJson(declarativeManagement("declaration/" + group.getValue() + "/" + identifier, null));
                    cached = new DdmStore.StoredDeclaration(body.path("Type").asText(), identifier,
                            body.path("Payload").isObject() ? (ObjectNode) body.path("Payload") : JSON.createObjectNode(),
                            body.path("ServerToken").asText(token));
                    fetched.put(identifier, cached);
                    fetches.add(identifier + "@" + cached.serverToken());
                }
                declarations.add(cached);
            }
        }
        return declarations;
    }

    @Override
    public void report(ObjectNode report) {
        declarativeManagement("status", report.toString().getBytes(StandardCharsets.UTF_8));
    }

    private String declarativeManagement(String endpoint, byte[] data) {
        Map<String, Object> body = entries("MessageType", "DeclarativeManagement", "UDID", udid, "Endpoint", endpoint);
        if (data != null) {
            body.put("Data", data);
        }
        return checkIn(body);
    }

    private String checkIn(Map<String, Object> body) {
        return put(checkInUrl, CHECK_IN_TYPE, plist(body));
    }

    private String put(URI url, String contentType, String body) {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(deadline).header("Content-Type", contentType)
                .header(certificateHeader, certificate).PUT(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("MDM request of " + udid + " to " + url + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (response.statusCode() != 200) {
            throw new IllegalStateException("MDM server answered " + response.statusCode() + " to " + udid + "'s " + firstString(body)
                    + " at " + url.getPath() + ": " + response.body().strip());
        }
        return response.body();
    }

    private static String firstString(String plist) {
        int message = plist.indexOf("<key>MessageType</key>");
        int status = plist.indexOf("<key>Status</key>");
        int at = message >= 0 ? message : status;
        if (at < 0) {
            return "request";
        }
        int start = plist.indexOf("<string>", at) + 8;
        return plist.substring(start, plist.indexOf("</string>", start));
    }

    private static JsonNode readJson(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + body, e);
        }
    }

    private static Map<String, Object> entries(String... keysAndValues) {
        Map<String, Object> entries = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            entries.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return entries;
    }

    static String plist(Map<String, Object> entries) {
        StringBuilder body = new StringBuilder("""
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                """);
        entries.forEach((key, value) -> {
            body.append("\t<key>").append(escape(key)).append("</key>\n");
            if (value instanceof byte[] bytes) {
                body.append("\t<data>").append(Base64.getEncoder().encodeToString(bytes)).append("</data>\n");
            } else {
                body.append("\t<string>").append(escape(value.toString())).append("</string>\n");
            }
        });
        return body.append("</dict>\n</plist>\n").toString();
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /** The top-level dictionary of a property list. */
    static Map<String, Node> dictionary(String plist) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setExpandEntityReferences(false);
            Element root = factory.newDocumentBuilder().parse(new ByteArrayInputStream(plist.getBytes(StandardCharsets.UTF_8))).getDocumentElement();
            return dictionary((Element) root.getElementsByTagName("dict").item(0));
        } catch (Exception e) {
            throw new IllegalStateException("not a property list: " + plist, e);
        }
    }

    /** A plist dictionary's entries by key (the simulated NanoHUB reads the devices' plists with it too). */
    static Map<String, Node> dictionary(Element dict) {
        Map<String, Node> entries = new LinkedHashMap<>();
        NodeList children = dict.getChildNodes();
        String key = null;
        for (int i = 0; i < children.getLength(); i++) {
            Node child = children.item(i);
            if (child.getNodeType() != Node.ELEMENT_NODE) {
                continue;
            }
            if (child.getNodeName().equals("key")) {
                key = child.getTextContent();
            } else if (key != null) {
                entries.put(key, child);
                key = null;
            }
        }
        return entries;
    }
}
