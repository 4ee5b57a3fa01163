package io.macfleet.mdm;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * OS updates through declarations, for any {@link DeclarativeManagement} server. A group (a cluster) gets one set,
 * {@code macfleet.GROUP}, holding four declarations whose identifiers depend only on the group, so that a new target
 * replaces the old enforcement instead of adding a second one:
 * <ol>
 *   <li>{@code com.apple.configuration.softwareupdate.settings}: automatic downloads and installs off, so no node
 *       updates itself out of step with its cluster;</li>
 *   <li>{@code com.apple.configuration.management.status-subscriptions}: the five status items a campaign watches;</li>
 *   <li>{@code com.apple.configuration.softwareupdate.enforcement.specific}: the exact target;</li>
 *   <li>{@code com.apple.activation.simple} activating the three (a configuration no activation references stays
 *       inactive: {@code Info.NotReferencedByActivation}).</li>
 * </ol>
 * The same declarations are kept as templates in mdm-profiles/declarations/ (DeclarationTemplatesTest keeps the two
 * in step and checks both against Apple's field lists).
 */
public final class DeclarativeOsUpdates implements OsUpdateEnforcement {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,29}");

    /** The status items Apple's "phases of software update enforcement" article advises subscribing to. */
    public static final List<String> STATUS_ITEMS = List.of(
            "softwareupdate.install-state", "softwareupdate.pending-version", "softwareupdate.failure-reason",
            "device.operating-system.version", "device.operating-system.build-version");

    private final DeclarativeManagement server;

    public DeclarativeOsUpdates(DeclarativeManagement server) {
        this.server = Objects.requireNonNull(server);
    }

    public static String setName(String group) {
        return "macfleet." + checkedGroup(group);
    }

    /** The four declarations for a group and target, activation last. */
    public static List<Declaration> declarations(String group, OsUpdateTarget target) {
        String prefix = "io.macfleet." + checkedGroup(group) + ".";
        ObjectNode settings = JSON.createObjectNode();
        settings.put("Notifications", false);
        settings.put("AllowStandardUserOSUpdates", false);
        ObjectNode automatic = settings.putObject("AutomaticActions");
        automatic.put("Download", "AlwaysOff");
        automatic.put("InstallOSUpdates", "AlwaysOff");
        automatic.put("InstallSecurityUpdate", "AlwaysOff");
        // Major upgrades stay out of System Settings for 90 days (Apple's maximum) so nobody starts one by hand on a
        // single node; minor updates are not deferred, so an enforcement target of a fresh minor is never hidden.
        settings.putObject("Deferrals").put("MajorPeriodInDays", 90);

        ObjectNode subscriptions = JSON.createObjectNode();
        ArrayNode items = subscriptions.putArray("StatusItems");
        STATUS_ITEMS.forEach(name -> items.addObject().put("Name", name));

        ObjectNode enforcement = JSON.createObjectNode();
        enforcement.put("TargetOSVersion", target.osVersion());
        target.buildVersion().ifPresent(build -> enforcement.put("TargetBuildVersion", build));
        enforcement.put("TargetLocalDateTime", target.targetLocalDateTime());

        List<Declaration> configurations = List.of(
                new Declaration("com.apple.configuration.softwareupdate.settings", prefix + "softwareupdate.settings", settings),
                new Declaration("com.apple.configuration.management.status-subscriptions", prefix + "status-subscriptions", subscriptions),
                new Declaration("com.apple.configuration.softwareupdate.enforcement.specific", prefix + "softwareupdate.enforcement", enforcement));
        ObjectNode activation = JSON.createObjectNode();
        ArrayNode standard = activation.putArray("StandardConfigurations");
        configurations.forEach(configuration -> standard.add(configuration.identifier()));
        List<Declaration> all = new ArrayList<>(configurations);
        all.add(new Declaration("com.apple.activation.simple", prefix + "activation", activation));
        return List.copyOf(all);
    }

    @Override
    public List<Change> enforce(String group, OsUpdateTarget target, List<String> enrollmentIds) {
        if (enrollmentIds.isEmpty()) {
            throw new IllegalArgumentException("no enrollments to update in group " + group);
        }
        List<Change> changes = new ArrayList<>();
        String set = setName(group);
        List<Declaration> declarations = declarations(group, target);
        // Declarations first, then set membership, then assignments: a device synced by any step already finds the
        // whole set, never an activation pointing at configurations not yet stored.
        for (Declaration declaration : declarations) {
            changes.add(server.putDeclaration(declaration));
        }
        for (Declaration declaration : declarations) {
            changes.add(server.addToSet(set, declaration.identifier()));
        }
        for (String enrollmentId : enrollmentIds) {
            changes.add(server.assignSet(enrollmentId, set));
        }
        return List.copyOf(changes);
    }

    @Override
    public List<SoftwareUpdateStatus> status(List<String> enrollmentIds) {
        return enrollmentIds.stream().map(server::softwareUpdateStatus).toList();
    }

    private static String checkedGroup(String group) {
        if (group == null || !GROUP.matcher(group).matches()) {
            throw new IllegalArgumentException("group name '" + group + "' must be 1-30 letters, digits, '-' or '_' (it names declarations)");
        }
        return group;
    }
}
