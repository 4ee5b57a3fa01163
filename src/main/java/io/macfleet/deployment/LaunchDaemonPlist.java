package io.macfleet.deployment;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * Renders a {@link LaunchDaemon} as the XML property list launchd reads from /Library/LaunchDaemons, and reads
 * one back. Every rendering is parsed back and compared with the record before it is returned, so a plist that
 * reaches a Mac says exactly what the record says (escaping included).
 */
public final class LaunchDaemonPlist {

    private static final String HEADER = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            """;

    private LaunchDaemonPlist() {
    }

    public static String render(LaunchDaemon daemon) {
        StringBuilder xml = new StringBuilder(HEADER);
        key(xml, "Label").append("\t<string>").append(escape(daemon.label())).append("</string>\n");
        key(xml, "ProgramArguments").append("\t<array>\n");
        for (String argument : daemon.programArguments()) {
            xml.append("\t\t<string>").append(escape(argument)).append("</string>\n");
        }
        xml.append("\t</array>\n");
        if (!daemon.environment().isEmpty()) {
            key(xml, "EnvironmentVariables").append("\t<dict>\n");
            daemon.sortedEnvironment().forEach((name, value) -> xml.append("\t\t<key>").append(escape(name)).append("</key>\n")
                    .append("\t\t<string>").append(escape(value)).append("</string>\n"));
            xml.append("\t</dict>\n");
        }
        if (daemon.userName() != null) {
            key(xml, "UserName").append("\t<string>").append(escape(daemon.userName())).append("</string>\n");
        }
        if (daemon.workingDirectory() != null) {
            key(xml, "WorkingDirectory").append("\t<string>").append(escape(daemon.workingDirectory())).append("</string>\n");
        }
        key(xml, "KeepAlive").append('\t').append(daemon.keepAlive() ? "<true/>" : "<false/>").append('\n');
        key(xml, "RunAtLoad").append('\t').append(daemon.runAtLoad() ? "<true/>" : "<false/>").append('\n');
        key(xml, "ProcessType").append("\t<string>Interactive</string>\n");
        key(xml, "ThrottleInterval").append("\t<integer>").append(daemon.throttleIntervalSeconds()).append("</integer>\n");
        key(xml, "StandardOutPath").append("\t<string>").append(escape(daemon.standardOutPath())).append("</string>\n");
        key(xml, "StandardErrorPath").append("\t<string>").append(escape(daemon.standardErrorPath())).append("</string>\n");
        key(xml, "SoftResourceLimits").append("\t<dict>\n\t\t<key>NumberOfFiles</key>\n\t\t<integer>")
                .append(daemon.numberOfFiles()).append("</integer>\n\t</dict>\n");
        xml.append("</dict>\n</plist>\n");
        String rendered = xml.toString();
        LaunchDaemon back;
        try {
            back = parse(rendered);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("the plist rendered for " + daemon.label() + " does not parse back: " + e.getMessage(), e);
        }
        if (!back.equals(daemon)) {
            throw new IllegalStateException("the plist rendered for " + daemon.label() + " reads back differently: " + back);
        }
        return rendered;
    }

    /**
     * Reads a plist of the shape {@link #render} writes. Throws {@link IOException} naming what is wrong when it
     * is not XML, not a plist dict, lacks a key the node's daemon needs, or holds a value of the wrong type.
     */
    public static LaunchDaemon parse(String xml) throws IOException {
        Element dict = topDict(xml);
        Map<String, Element> entries = entries(dict);
        String label = string(entries, "Label");
        List<String> arguments = new ArrayList<>();
        for (Element item : children(required(entries, "ProgramArguments", "array"))) {
            arguments.add(stringValue("ProgramArguments", item));
        }
        Map<String, String> environment = new LinkedHashMap<>();
        if (entries.containsKey("EnvironmentVariables")) {
            entries(required(entries, "EnvironmentVariables", "dict"))
                    .forEach((name, value) -> environment.put(name, value.getTextContent()));
        }
        String workingDirectory = entries.containsKey("WorkingDirectory") ? string(entries, "WorkingDirectory") : null;
        String processType = string(entries, "ProcessType");
        if (!processType.equals("Interactive")) {
            throw new IOException("ProcessType is " + processType + ", not Interactive: macOS would throttle the node");
        }
        Element limits = required(entries, "SoftResourceLimits", "dict");
        return new LaunchDaemon(label, arguments, environment, workingDirectory, bool(entries, "KeepAlive"),
                bool(entries, "RunAtLoad"), integer(entries(dict), "ThrottleInterval"), string(entries, "StandardOutPath"),
                string(entries, "StandardErrorPath"), integer(entries(limits), "NumberOfFiles"),
                entries.containsKey("UserName") ? string(entries, "UserName") : null);
    }

    /** XML-escapes text content: the five predefined entities, so paths with '&', '<' or quotes survive. */
    static String escape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int index = 0; index < text.length(); index++) {
            char character = text.charAt(index);
            switch (character) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> out.append(character);
            }
        }
        return out.toString();
    }

    private static StringBuilder key(StringBuilder xml, String key) {
        return xml.append("\t<key>").append(key).append("</key>\n");
    }

    private static Element topDict(String xml) throws IOException {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            // The DOCTYPE names Apple's DTD by URL: never fetch it, and accept no entities from anywhere.
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
            factory.setExpandEntityReferences(false);
            javax.xml.parsers.DocumentBuilder builder = factory.newDocumentBuilder();
            // The default handler prints "[Fatal Error]" to stderr before throwing; the exception says it all.
            builder.setErrorHandler(new org.xml.sax.helpers.DefaultHandler() {
                @Override
                public void fatalError(org.xml.sax.SAXParseException e) throws SAXException {
                    throw e;
                }
            });
            Element plist = builder.parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)))
                    .getDocumentElement();
            List<Element> top = children(plist);
            if (!plist.getTagName().equals("plist") || top.size() != 1 || !top.getFirst().getTagName().equals("dict")) {
                throw new IOException("not a property list with one top-level dict");
            }
            return top.getFirst();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("not well-formed XML: " + e.getMessage(), e);
        }
    }

    private static Map<String, Element> entries(Element dict) throws IOException {
        Map<String, Element> entries = new LinkedHashMap<>();
        List<Element> children = children(dict);
        if (children.size() % 2 != 0) {
            throw new IOException("a dict has a key without a value");
        }
        for (int index = 0; index < children.size(); index += 2) {
            Element key = children.get(index);
            if (!key.getTagName().equals("key")) {
                throw new IOException("a dict holds <" + key.getTagName() + "> where a <key> belongs");
            }
            if (entries.put(key.getTextContent(), children.get(index + 1)) != null) {
                throw new IOException("key " + key.getTextContent() + " appears twice");
            }
        }
        return entries;
    }

    private static List<Element> children(Element parent) {
        List<Element> children = new ArrayList<>();
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element) {
                children.add(element);
            }
        }
        return children;
    }

    private static Element required(Map<String, Element> entries, String key, String type) throws IOException {
        Element value = entries.get(key);
        if (value == null) {
            throw new IOException("no " + key);
        }
        if (!value.getTagName().equals(type)) {
            throw new IOException(key + " is <" + value.getTagName() + ">, not <" + type + ">");
        }
        return value;
    }

    private static String string(Map<String, Element> entries, String key) throws IOException {
        return required(entries, key, "string").getTextContent();
    }

    private static String stringValue(String key, Element element) throws IOException {
        if (!element.getTagName().equals("string")) {
            throw new IOException(key + " holds <" + element.getTagName() + ">, not <string>");
        }
        return element.getTextContent();
    }

    private static boolean bool(Map<String, Element> entries, String key) throws IOException {
        Element value = entries.get(key);
        if (value == null || !(value.getTagName().equals("true") || value.getTagName().equals("false"))) {
            throw new IOException(key + " is missing or not <true/> or <false/>");
        }
        return value.getTagName().equals("true");
    }

    private static int integer(Map<String, Element> entries, String key) throws IOException {
        String text = required(entries, key, "integer").getTextContent().strip();
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IOException(key + " is not an integer: " + text, e);
        }
    }
}
