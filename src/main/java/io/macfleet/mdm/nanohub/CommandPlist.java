package io.macfleet.mdm.nanohub;

import io.macfleet.mdm.MdmCommand;

/**
 * An MDM command as the XML property list NanoMDM's enqueue endpoint takes (the shape of its docs/openapi.yaml
 * example and tools/cmdr.py output: a {@code Command} dictionary with {@code RequestType}, and {@code CommandUUID}).
 */
final class CommandPlist {
    private CommandPlist() {
    }

    static String encode(MdmCommand command) {
        StringBuilder inner = new StringBuilder();
        inner.append("\t\t<key>RequestType</key>\n\t\t<string>").append(escape(command.requestType())).append("</string>\n");
        switch (command) {
            case MdmCommand.RestartDevice restart -> {
                if (restart.notifyUser()) {
                    inner.append("\t\t<key>NotifyUser</key>\n\t\t<true/>\n");
                }
            }
            case MdmCommand.DeviceInformation information -> {
                inner.append("\t\t<key>Queries</key>\n\t\t<array>\n");
                for (String query : information.queries()) {
                    inner.append("\t\t\t<string>").append(escape(query)).append("</string>\n");
                }
                inner.append("\t\t</array>\n");
            }
        }
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>Command</key>
                \t<dict>
                %s\t</dict>
                \t<key>CommandUUID</key>
                \t<string>%s</string>
                </dict>
                </plist>
                """.formatted(inner, escape(command.commandUuid()));
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
